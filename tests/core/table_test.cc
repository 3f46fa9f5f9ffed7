#include "core/table.h"

#include <sstream>

#include <gtest/gtest.h>

namespace opsched {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

size_t Widest(const std::string& text) {
  size_t most = 0;
  for (const std::string& line : Lines(text)) most = std::max(most, DisplayWidth(line));
  return most;
}

TEST(TableTest, DisplayWidthCountsColumnsNotBytes) {
  EXPECT_EQ(DisplayWidth(""), 0u);
  EXPECT_EQ(DisplayWidth("2.95x"), 5u);
  EXPECT_EQ(DisplayWidth("2.95\u00d7"), 5u);   // '×' is two bytes, one column
  EXPECT_EQ(DisplayWidth("13 \u00b5s"), 5u);   // 'µ' likewise
  EXPECT_EQ(DisplayWidth("\u8868\u683c"), 4u);  // East Asian wide: two columns each
  EXPECT_EQ(DisplayWidth("e\u0301"), 1u);       // a combining accent takes none
  EXPECT_EQ(DisplayWidth("\xff\xfe"), 2u);      // invalid bytes: one column each
  EXPECT_EQ(DisplayWidth("\xe2\x82"), 2u);      // a truncated sequence likewise
}

TEST(TableTest, TruncationKeepsWholeCodePointsAndAddsAnEllipsis) {
  EXPECT_EQ(TruncateToWidth("scatter_parallel", 16), "scatter_parallel");
  EXPECT_EQ(TruncateToWidth("scatter_parallel", 10), "scatter...");
  const std::string cut = TruncateToWidth("\u00d7\u00d7\u00d7\u00d7\u00d7\u00d7", 5);
  EXPECT_EQ(cut, "\u00d7\u00d7...");
  EXPECT_EQ(DisplayWidth(cut), 5u);
  EXPECT_EQ(TruncateToWidth("\u8868\u683c\u8868", 6), "\u8868\u683c\u8868");  // 6 columns: it fits
  EXPECT_EQ(TruncateToWidth("\u8868\u683c\u8868", 5), "\u8868...");  // a wide character never half-cut
  EXPECT_EQ(TruncateToWidth("abcdef", 2), "..");
}

TEST(TableTest, ColumnsAlignByDisplayWidth) {
  Table t({{.header = "speedup", .right = true}, {.header = "time"}, {.header = "op"}});
  t.AddRow({"2.95\u00d7", "13 \u00b5s", "scatter"});
  t.AddRow({"12.00x", "1300 us", "reduce"});
  const std::vector<std::string> lines = Lines(t.ToString());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "speedup  time     op");
  EXPECT_EQ(lines[1], "-------  -------  -------");
  EXPECT_EQ(lines[2], "  2.95\u00d7  13 \u00b5s    scatter");
  EXPECT_EQ(lines[3], " 12.00x  1300 us  reduce");
}

Table Wide() {
  Table t({{.header = "line", .right = true},
           {.header = "workload", .min_width = 30, .importance = 2},
           {.header = "implementation", .min_width = 20, .importance = 4},
           {.header = "extra", .droppable = true, .importance = 0},
           {.header = "detail", .droppable = true, .importance = 1},
           {.header = "us", .right = true, .importance = 5}});
  t.AddRow({"1", std::string(90, 'w'), "scatter_cuda_privatized_atomic", std::string(10, 'e'), std::string(12, 'd'),
            "12.50"});
  t.AddRow({"2", "reduce x=f32[4] axes=0 op=sum", "error: no implementation applies"});
  return t;
}

TEST(TableTest, NarrowTablesCutThenDropTheLeastImportantColumns) {
  const Table t = Wide();
  const std::string wide = t.ToString(0);
  EXPECT_GT(Widest(wide), kTableWidth);
  EXPECT_NE(wide.find(std::string(90, 'w')), std::string::npos);
  EXPECT_NE(wide.find("scatter_cuda_privatized_atomic"), std::string::npos);

  const std::string narrow = t.ToString();
  EXPECT_LE(Widest(narrow), kTableWidth) << narrow;
  const std::vector<std::string> lines = Lines(narrow);
  ASSERT_EQ(lines.size(), 4u);
  // At their least the cut columns need 4+30+20+10+12+5 and 5 gaps = 91 columns: nothing
  // needs dropping; the workload (less important) is cut before the implementation.
  EXPECT_NE(lines[0].find("extra"), std::string::npos) << narrow;
  EXPECT_NE(lines[0].find("detail"), std::string::npos) << narrow;
  EXPECT_NE(lines[2].find("scatter_cuda_privatized_atomic"), std::string::npos) << narrow;
  EXPECT_NE(lines[2].find("  " + std::string(46, 'w') + "...  "), std::string::npos) << narrow;
  EXPECT_EQ(DisplayWidth(lines[2]), kTableWidth) << narrow;
  // The short row's last cell runs on from its column.
  EXPECT_NE(lines[3].find("reduce x=f32[4] axes=0 op=sum"), std::string::npos) << narrow;
  EXPECT_NE(lines[3].find("error: no implementation applies"), std::string::npos) << narrow;

  // Narrower still: the least important droppable column goes first, then the next.
  const std::string eighty = t.ToString(80);
  EXPECT_LE(Widest(eighty), 80u) << eighty;
  EXPECT_EQ(eighty.find("extra"), std::string::npos) << eighty;
  EXPECT_NE(eighty.find("detail"), std::string::npos) << eighty;
  const std::string sixty = t.ToString(70);
  EXPECT_LE(Widest(sixty), 70u) << sixty;
  EXPECT_EQ(sixty.find("extra"), std::string::npos) << sixty;
  EXPECT_EQ(sixty.find("detail"), std::string::npos) << sixty;
  EXPECT_NE(sixty.find("12.50"), std::string::npos) << sixty;  // never dropped
}

TEST(TableTest, PlainColumnsAreNeverCutNorDropped) {
  Table t({{.header = "a"}, {.header = "b"}});
  t.AddRow({std::string(200, 'x'), "y"});
  EXPECT_NE(t.ToString().find(std::string(200, 'x') + "  y"), std::string::npos);
}

}  // namespace
}  // namespace opsched
