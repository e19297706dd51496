// The scalar renderers of serializer/program_text.h, which the golden files only sample.
#include "serializer/program_text.h"

#include <gtest/gtest.h>

#include <limits>

namespace nrt {
namespace {

TEST(RenderFloat, FollowsPythonRepr) {
  EXPECT_EQ(render_float(1.0), "1.0");
  EXPECT_EQ(render_float(0.1), "0.1");
  EXPECT_EQ(render_float(-2.5), "-2.5");
  EXPECT_EQ(render_float(0.0001), "0.0001");
  EXPECT_EQ(render_float(1e-05), "1e-05");
  EXPECT_EQ(render_float(1.5e-07), "1.5e-07");
  EXPECT_EQ(render_float(1e15), "1000000000000000.0");
  EXPECT_EQ(render_float(1e16), "1e+16");
  EXPECT_EQ(render_float(123456789.125), "123456789.125");
  EXPECT_EQ(render_float(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(render_float(5e-324), "5e-324");
  EXPECT_EQ(render_float(0.0), "0.0");
  EXPECT_EQ(render_float(-0.0), "-0.0");
  EXPECT_EQ(render_float(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(render_float(-std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(render_float(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(render_float(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(RenderString, QuotesAndEscapesLikePython) {
  EXPECT_EQ(render_string("sum"), "'sum'");
  EXPECT_EQ(render_string(""), "''");
  EXPECT_EQ(render_string("it's"), "'it\\'s'");
  EXPECT_EQ(render_string("a\\b"), "'a\\\\b'");
  EXPECT_EQ(render_string("line\nnext\ttab\r"), "'line\\nnext\\ttab\\r'");
  EXPECT_EQ(render_string("\x1b[31m"), "'\\x1b[31m'");
  EXPECT_EQ(render_string("\x7f"), "'\\x7f'");
}

TEST(Printable, KeepsValidUtf8AndEscapesEverythingElse) {
  EXPECT_EQ(printable("plain_name.0"), "plain_name.0");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe4\xb8\xad"), "caf\xc3\xa9 \xe4\xb8\xad");  // é, 中
  EXPECT_EQ(printable("\xff"), "\\xff");                                     // not UTF-8
  EXPECT_EQ(printable("\xc3"), "\\xc3");                                     // truncated sequence
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                            // overlong '/'
  EXPECT_EQ(printable("\xc2\x9b"), "\\xc2\\x9b");                            // C1 control (CSI)
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");                   // surrogate
  EXPECT_EQ(printable("a\nb"), "a\\nb");
}

TEST(RenderSymbolic, ShortensSreprSymbolsAndIntegers) {
  EXPECT_EQ(render_symbolic("s0"), "s0");
  EXPECT_EQ(render_symbolic("Symbol('s0', positive=True, integer=True)"), "s0");
  EXPECT_EQ(render_symbolic("Mul(Integer(2), Symbol('s1', integer=True))"), "Mul(2, s1)");
  EXPECT_EQ(render_symbolic("Integer(-3)"), "-3");
  EXPECT_EQ(render_symbolic("Symbol('s0'"), "Symbol('s0'");  // malformed: kept as written
}

TEST(RenderEnums, UseTorchSpelling) {
  EXPECT_EQ(render_scalar_type(fb::ScalarType::FLOAT32), "torch.float32");
  EXPECT_EQ(render_scalar_type(fb::ScalarType::FLOAT8_E4M3FN), "torch.float8_e4m3fn");
  EXPECT_EQ(render_scalar_type(static_cast<fb::ScalarType>(200)), "torch.<unknown 200>");
  EXPECT_EQ(render_layout(fb::Layout::STRIDED), "torch.strided");
  EXPECT_EQ(render_memory_format(fb::MemoryFormat::CHANNELS_LAST), "torch.channels_last");
  EXPECT_EQ(render_device(nullptr), "cpu");
  EXPECT_EQ(render_device_type(fb::DeviceType::PRIVATEUSE1), "privateuseone");
  EXPECT_EQ(render_reduce_op(fb::ReduceOp::MAXIMUM), "max");
  EXPECT_EQ(render_input_kind(fb::InputKind::CONSTANT_INPUT), "constant_input");
  EXPECT_EQ(render_output_kind(fb::OutputKind::GRADIENT_TO_PARAMETER), "gradient_to_parameter");
}

TEST(RenderPlacement, NamesEveryKind) {
  EXPECT_EQ(render_placement(fb::Placement(fb::PlacementKind::SHARD, fb::ReduceOp::SUM, 1, 0)), "Shard(1)");
  EXPECT_EQ(render_placement(fb::Placement(fb::PlacementKind::REPLICATE, fb::ReduceOp::SUM, 0, 0)), "Replicate()");
  EXPECT_EQ(render_placement(fb::Placement(fb::PlacementKind::PARTIAL, fb::ReduceOp::AVG, 0, 0)), "Partial(avg)");
  EXPECT_EQ(render_placement(fb::Placement(fb::PlacementKind::STRIDED_SHARD, fb::ReduceOp::SUM, 0, 2)),
            "_StridedShard(dim=0, sf=2)");
}

}  // namespace
}  // namespace nrt
