// Every reader of the tools refuses what is not a regular file (a FIFO, a device, a directory, a
// socket) at once, with NRT-E101 naming what it is: none blocks in open() or reads forever.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "executor/runtime/kernel_library.h"
#include "io/npy.h"
#include "serializer/program_file.h"
#include "serializer/read_file.h"
#include "serializer/regular_file.h"
#include "serializer/open_program.h"
#include "serializer/torch_export/pt2_archive.h"
#include "tests/torch_export/test_files.h"

namespace nrt {
namespace {

struct Special {
  std::string path;
  std::string kind;  // what the message must call it
};

// A FIFO (no writer: opening it blocking would wait forever), a directory, a listening Unix
// socket and /dev/zero (a character device that never ends).
std::vector<Special> special_files() {
  static const std::string dir = test::scratch_dir("special_files");
  static bool made = false;
  if (!made) {
    made = true;
    EXPECT_EQ(::mkfifo((dir + "/fifo.nrt").c_str(), 0644), 0);
    std::filesystem::create_directory(dir + "/directory.nrt");
  }
  // A socket's path must fit sockaddr_un (108 bytes): Bazel's TEST_TMPDIR is too deep for it.
  static const std::string socket_path = [] {
    char name[] = "/tmp/nrt_socket_XXXXXX";
    const char* made = ::mkdtemp(name);
    EXPECT_NE(made, nullptr);
    const std::string path = std::string(made ? made : "/tmp") + "/socket.nrt";
    const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    EXPECT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address), 0) << path;
    ::close(sock);  // the socket file stays
    return path;
  }();
  return {{dir + "/fifo.nrt", "a FIFO"},
          {dir + "/directory.nrt", "a directory"},
          {"/dev/zero", "a character device"},
          {socket_path, "a socket"}};
}

template <typename T>
std::optional<Error> error_of(const Result<T>& result) {
  if (result) return std::nullopt;
  return result.error();
}

void expect_refused(const Error& error, const Special& file, const std::string& reader) {
  EXPECT_EQ(error.code, ErrorCode::IoOpen) << reader << " " << file.path << ": " << error.to_string();
  EXPECT_NE(error.message.find(file.kind), std::string::npos) << reader << ": " << error.message;
}

TEST(SpecialFiles, EveryReaderRefusesThemAtOnce) {
  using Reader = std::function<std::optional<Error>(const std::string&)>;
  const std::vector<std::pair<std::string, Reader>> readers = {
      {"open_regular_file", [](const std::string& p) { return error_of(open_regular_file(p)); }},
      {"read_file", [](const std::string& p) { return error_of(read_file(p)); }},
      {"read_file_head", [](const std::string& p) { return error_of(read_file_head(p, 16)); }},
      {"MappedFile", [](const std::string& p) { return error_of(MappedFile::open(p)); }},
      {"ProgramFile", [](const std::string& p) { return error_of(ProgramFile::open(p)); }},
      {"open_program", [](const std::string& p) { return error_of(open_program(p)); }},
      {"open_program(pt2)", [](const std::string& p) { return error_of(open_program(p, {.format = ProgramFormat::kPt2})); }},
      {"Pt2Reader", [](const std::string& p) { return error_of(torch_export::Pt2Reader::open(p)); }},
      {"read_npy", [](const std::string& p) { return error_of(exec::read_npy(p)); }},
      {"load_kernel_library", [](const std::string& p) { return error_of(exec::load_kernel_library(p)); }},
  };
  for (const Special& file : special_files()) {
    for (const auto& [name, read] : readers) {
      auto error = read(file.path);
      ASSERT_TRUE(error.has_value()) << name << " accepted " << file.path;
      expect_refused(*error, file, name);
    }
  }
}

TEST(RegularFiles, ReadsStopAtTheFileAndAtTheCallersCap) {
  const std::string dir = test::scratch_dir("regular_files");
  test::write_bytes(dir + "/a.txt", {'h', 'e', 'l', 'l', 'o'});
  EXPECT_EQ(*read_file(dir + "/a.txt"), "hello");
  EXPECT_EQ(*read_file_head(dir + "/a.txt", 3), "hel");
  EXPECT_EQ(*read_file_head(dir + "/a.txt", 100), "hello");
  auto capped = read_file(dir + "/a.txt", 4);
  ASSERT_FALSE(capped.ok());
  EXPECT_EQ(capped.error().code, ErrorCode::IoOpen);
  EXPECT_NE(capped.error().message.find("holds 5 bytes, more than the 4"), std::string::npos) << capped.error().message;
  auto missing = read_file(dir + "/none.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("No such file"), std::string::npos) << missing.error().message;
  auto mapped = MappedFile::open(dir + "/a.txt");
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ((*mapped)->bytes().size(), 5u);
  test::write_bytes(dir + "/empty.txt", {});
  auto empty = MappedFile::open(dir + "/empty.txt");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE((*empty)->bytes().empty());
}

}  // namespace
}  // namespace nrt
