// The catalogue's text tables (parity/hw/catalogue_text.hpp): value formatting, one row per GPU,
// every field with its provenance, ratios a/b.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "parity/hw/catalogue.hpp"
#include "parity/hw/catalogue_text.hpp"

namespace parity::hw {
namespace {

std::filesystem::path shipped_hardware_dir() { return std::filesystem::path(PARITY_SOURCE_DIR) / "data" / "hardware"; }

TEST(HwCatalogueText, FormatsWholeNumbersAndShortDecimals) {
  EXPECT_EQ(format_catalogue_value(4800.0), "4800");
  EXPECT_EQ(format_catalogue_value(1.5), "1.5");
  EXPECT_EQ(format_catalogue_value(4.8), "4.8");
  EXPECT_EQ(format_catalogue_value(0.126), "0.13");  // two decimals below 100
  EXPECT_EQ(format_catalogue_value(989.44), "989.4");  // one decimal at or above 100
  EXPECT_EQ(format_catalogue_value(-2.0), "-2");
}

TEST(HwCatalogueText, TableHasAHeaderAndOneRowPerGpu) {
  auto catalogue = load_catalogue(shipped_hardware_dir());
  ASSERT_TRUE(catalogue.is_ok()) << catalogue.status().to_string();
  const std::string text = catalogue_table_text(*catalogue);
  EXPECT_EQ(text.rfind("name", 0), 0u);
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  EXPECT_EQ(lines, catalogue->size() + 1);
  for (const HardwareSpec& spec : *catalogue) EXPECT_NE(text.find("\n" + spec.name + " "), std::string::npos);
}

TEST(HwCatalogueText, ShowAndCompareNameEveryField) {
  auto h200 = find_hardware("h200", std::optional<std::filesystem::path>(shipped_hardware_dir().parent_path()));
  ASSERT_TRUE(h200.is_ok()) << h200.status().to_string();
  const std::string show = hardware_spec_text(*h200);
  EXPECT_EQ(show.rfind("h200: ", 0), 0u);
  for (const QuantityField& field : hardware_quantity_fields()) {
    EXPECT_NE(show.find(std::string(field.label)), std::string::npos) << field.label;
  }
  EXPECT_NE(show.find("[derived]"), std::string::npos);
  const std::string compare = hardware_compare_text(*h200, *h200);
  EXPECT_NE(compare.find("h200/h200"), std::string::npos);
  EXPECT_NE(compare.find("1.00\u00d7"), std::string::npos);  // a GPU against itself: every ratio is 1
  EXPECT_EQ(compare.find("0.00\u00d7"), std::string::npos);
}

}  // namespace
}  // namespace parity::hw
