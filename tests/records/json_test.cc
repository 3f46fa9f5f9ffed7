#include "records/json.h"

#include <gtest/gtest.h>

#include "tests/records/record_factory.h"

namespace opsched::records {
namespace {

TEST(JsonTest, RoundTripIsByteIdentical) {
  Record r = testing::MakeRecord(
      "conv2d x=f32[32,64,56,56] w=f32[64,64,3,3] stride=1,1 pad=1,1 dilation=1,1 groups=1 "
      "layout=nchw math=fp32",
      testing::TestGpu(), "conv2d_cudnn", "algo=implicit_precomp_gemm,streams=1", 271.5);
  r.set_message("quote \" and newline \n survive");
  StatusOr<std::string> json = RecordToJson(r);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->find('\n'), std::string::npos);  // one object per line
  EXPECT_NE(json->find("\"implementation\":\"conv2d_cudnn\""), std::string::npos) << *json;
  EXPECT_NE(json->find("\"status\":\"OK\""), std::string::npos) << *json;
  StatusOr<Record> back = RecordFromJson(*json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->SerializeAsString(), r.SerializeAsString());
  EXPECT_EQ(*RecordToJson(*back), *json);
}

TEST(JsonTest, BadJsonIsAnError) {
  EXPECT_FALSE(RecordFromJson("{not json").ok());
  EXPECT_FALSE(RecordFromJson("{\"no_such_field\": 1}").ok());
  EXPECT_FALSE(RecordFromJson("{\"status\": \"FINE\"}").ok());
}

}  // namespace
}  // namespace opsched::records
