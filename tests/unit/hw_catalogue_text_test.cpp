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

// The reports `parity hw list | show | compare` print: the text functions over the catalogue of
// the data directory given (the shipped one here), errors for unknown names.
TEST(HwCatalogueText, CommandReportsReadTheGivenDataDir) {
  const std::string data_dir = shipped_hardware_dir().parent_path().string();
  auto catalogue = load_catalogue(shipped_hardware_dir());
  ASSERT_TRUE(catalogue.is_ok()) << catalogue.status().to_string();
  auto h200 = find_hardware("h200", *catalogue);
  auto mi300x = find_hardware("mi300x", *catalogue);
  ASSERT_TRUE(h200.is_ok() && mi300x.is_ok());

  auto list = catalogue_list_report(data_dir);
  ASSERT_TRUE(list.is_ok()) << list.status().to_string();
  EXPECT_EQ(*list, catalogue_table_text(*catalogue));
  auto show = hardware_show_report("H200", false, data_dir);
  ASSERT_TRUE(show.is_ok()) << show.status().to_string();
  EXPECT_EQ(*show, hardware_spec_text(*h200));
  auto show_json = hardware_show_report("h200", true, data_dir);
  ASSERT_TRUE(show_json.is_ok()) << show_json.status().to_string();
  EXPECT_EQ(*show_json, hardware_spec_json_text(*h200));
  auto compare = hardware_compare_report("h200", "mi300x", data_dir);
  ASSERT_TRUE(compare.is_ok()) << compare.status().to_string();
  EXPECT_EQ(*compare, hardware_compare_text(*h200, *mi300x));

  EXPECT_EQ(hardware_show_report("no_such_gpu", false, data_dir).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(hardware_compare_report("h200", "no_such_gpu", data_dir).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(catalogue_list_report((std::filesystem::path(data_dir) / "missing").string()).is_ok());
}

}  // namespace
}  // namespace parity::hw
