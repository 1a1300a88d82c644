// DatasetRef: "FILE.h5:/path" as written on the command line.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "io/dataset_ref.hpp"

namespace tessera::io {
namespace {

TEST(DatasetRef, SplitsAtTheLastColonSlash) {
  const auto a = DatasetRef::parse("out.h5:/A");
  EXPECT_EQ(a.file, "out.h5");
  EXPECT_EQ(a.path, "/A");
  EXPECT_EQ(a.str(), "out.h5:/A");
  const auto b = DatasetRef::parse("/data/run:3/x.h5:/g/h/T");
  EXPECT_EQ(b.file, "/data/run:3/x.h5");
  EXPECT_EQ(b.path, "/g/h/T");
}

TEST(DatasetRef, RejectsSpecsWithoutADataset) {
  for (const char* bad : {"out.h5", "out.h5:", "out.h5:/", ":/A", "out.h5:A", ""}) {
    try {
      (void)DatasetRef::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("FILE.h5:/dataset"), std::string::npos) << e.what();
    }
  }
}

} // namespace
} // namespace tessera::io
