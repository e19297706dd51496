// Writes that replace an output: only a regular file or a new path is replaced (never a FIFO, a
// directory or a socket), a replaced file keeps its mode, a new one gets 0666 less the umask,
// and SIGINT, SIGTERM or SIGHUP during the write leave no temporary file behind (unless the write
// opted out, as a flight-recorder dump does).
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "serializer/atomic_file.h"
#include "tests/torch_export/test_files.h"

namespace nrt {
namespace {

std::span<const uint8_t> bytes_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode;
}

TEST(AtomicWrite, RefusesToReplaceWhatIsNotARegularFile) {
  const std::string dir = test::scratch_dir("atomic_special");
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0644), 0);
  std::filesystem::create_directory(dir + "/directory");
  for (const auto& [name, kind] : {std::pair<std::string, std::string>{"fifo", "a FIFO"}, {"directory", "a directory"}}) {
    const std::string path = dir + "/" + name;
    Status status = write_file_atomically(path, bytes_of("data"));
    ASSERT_FALSE(status.ok()) << name;
    EXPECT_EQ(status.error().code, ErrorCode::IoWrite);
    EXPECT_NE(status.error().message.find(kind), std::string::npos) << status.error().message;
  }
  EXPECT_TRUE(S_ISFIFO(mode_of(dir + "/fifo")));
  EXPECT_TRUE(S_ISDIR(mode_of(dir + "/directory")));
  EXPECT_EQ(test::list_dir(dir), (std::vector<std::string>{"directory", "fifo"}));  // no temporary file
}

TEST(AtomicWrite, AReplacedFileKeepsItsModeAndANewOneFollowsTheUmask) {
  const std::string dir = test::scratch_dir("atomic_mode");
  for (const mode_t mode : {mode_t{0600}, mode_t{0755}, mode_t{0640}}) {
    const std::string path = dir + "/kept";
    ASSERT_TRUE(write_file_atomically(path, bytes_of("old")).ok());
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    ASSERT_TRUE(write_file_atomically(path, bytes_of("new")).ok());
    EXPECT_EQ(mode_of(path) & 07777, mode);
    EXPECT_EQ(test::read_text(path), "new");
  }
  const mode_t saved = ::umask(027);
  ASSERT_TRUE(write_file_atomically(dir + "/fresh", bytes_of("x")).ok());
  ::umask(saved);
  EXPECT_EQ(mode_of(dir + "/fresh") & 07777, mode_t{0640});
}

// A write without the fsync (a flight-recorder dump's) replaces the file as atomically, keeps its
// mode, leaves no temporary, and the whole file outlives a writer killed right after the commit.
TEST(AtomicWrite, WithoutFsyncTheFileIsWholeAfterTheWriterIsKilled) {
  const std::string dir = test::scratch_dir("atomic_no_fsync");
  const std::string path = dir + "/dump.json";
  ASSERT_TRUE(write_file_atomically(path, bytes_of("old")).ok());
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  const std::string content(1 << 20, 'd');
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!write_file_atomically(path, bytes_of(content), OnSignal::kKeepTemporary, Durability::kSkipFsync)) _exit(3);
    ::raise(SIGKILL);
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
  EXPECT_EQ(test::read_text(path), content);
  EXPECT_EQ(mode_of(path) & 07777, mode_t{0600});
  EXPECT_EQ(test::list_dir(dir), (std::vector<std::string>{"dump.json"}));
}

// The child process creates an output, writes part of it and is signalled before committing.
void write_then_signal(const std::string& path, int signal_number) {
  auto file = AtomicFile::create(path);
  if (!file) _exit(3);
  if (!file->write(bytes_of(std::string(1 << 20, 'x')))) _exit(4);
  ::raise(signal_number);
  _exit(5);  // not reached unless the signal is ignored
}

void exit_with_42(int) { _exit(42); }

class AtomicWriteSignal : public ::testing::TestWithParam<int> {};

TEST_P(AtomicWriteSignal, LeavesNoTemporaryFile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no handler installed yet
  const int signal_number = GetParam();
  const std::string dir = test::scratch_dir("atomic_signal_" + std::to_string(signal_number));
  EXPECT_EXIT(write_then_signal(dir + "/out.nrt", signal_number), ::testing::KilledBySignal(signal_number), "");
  EXPECT_TRUE(test::list_dir(dir).empty()) << test::list_dir(dir).front();
}

INSTANTIATE_TEST_SUITE_P(Signals, AtomicWriteSignal, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const auto& info) { return std::string(sigabbrev_np(info.param)); });

TEST(AtomicWrite, AHandlerInstalledBeforeStillRunsAfterTheCleanup) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string dir = test::scratch_dir("atomic_signal_chained");
  EXPECT_EXIT(
      {
        ::signal(SIGTERM, exit_with_42);
        write_then_signal(dir + "/out.nrt", SIGTERM);
      },
      ::testing::ExitedWithCode(42), "");
  EXPECT_TRUE(test::list_dir(dir).empty());
}

TEST(AtomicWrite, AnIgnoredSignalStaysIgnored) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string dir = test::scratch_dir("atomic_signal_ignored");
  EXPECT_EXIT(
      {
        ::signal(SIGHUP, SIG_IGN);  // as under nohup
        auto file = AtomicFile::create(dir + "/out.nrt");
        if (!file || !file->write(bytes_of("data"))) _exit(3);
        ::raise(SIGHUP);
        _exit(file->commit().ok() ? 6 : 7);
      },
      ::testing::ExitedWithCode(6), "");
  EXPECT_EQ(test::list_dir(dir), std::vector<std::string>{"out.nrt"});
}

void return_from_signal(int) {}

// A flight-recorder dump under way when SIGTERM comes: the signal removes the other output's
// temporary, a handler installed before it runs and returns, and the kept write still lands.
TEST(AtomicWrite, AKeptTemporarySurvivesTheSignalAndCommits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string dir = test::scratch_dir("atomic_signal_kept");
  EXPECT_EXIT(
      {
        ::signal(SIGTERM, return_from_signal);  // as the dump-on-signal handler does
        auto removed = AtomicFile::create(dir + "/out.nrt");
        auto kept = AtomicFile::create(dir + "/dump.json", OnSignal::kKeepTemporary);
        if (!removed || !kept || !kept->write(bytes_of("dump"))) _exit(3);
        ::raise(SIGTERM);
        _exit(kept->commit().ok() ? 6 : 7);
      },
      ::testing::ExitedWithCode(6), "");
  EXPECT_EQ(test::list_dir(dir), std::vector<std::string>{"dump.json"});
  EXPECT_EQ(test::read_text(dir + "/dump.json"), "dump");
}

}  // namespace
}  // namespace nrt
