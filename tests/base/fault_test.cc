// base/fault: the grammar of PURLIN_FAULT_INJECT, which passage fails, what it throws, and
// that an unarmed or other site never throws.
#include "base/fault.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>

namespace purlin::fault {
namespace {

class Fault : public testing::Test {
 protected:
  void TearDown() override { arm(nullptr); }
};

TEST_F(Fault, UnarmedSitesNeverThrow) {
  arm("");
  EXPECT_NO_THROW(point("entry"));
  EXPECT_NO_THROW(allocation("new_comm"));
}

TEST_F(Fault, BareSiteFailsEveryPassageAndOnlyThatSite) {
  arm("entry");
  EXPECT_NO_THROW(point("thread"));
  EXPECT_NO_THROW(point("entryway")) << "names match whole";
  for (int i = 0; i < 3; ++i) {
    try {
      point("entry");
      ADD_FAILURE() << "passage " << i << " did not throw";
    } catch (const Injected& e) {
      EXPECT_NE(std::string(e.what()).find("'entry'"), std::string::npos) << e.what();
    }
  }
}

TEST_F(Fault, CountedSiteFailsOnlyItsPassage) {
  arm("real_comm:3");
  EXPECT_NO_THROW(point("real_comm"));
  EXPECT_NO_THROW(point("other"));  // passages of other sites do not count
  EXPECT_NO_THROW(point("real_comm"));
  EXPECT_THROW(point("real_comm"), Injected);
  EXPECT_NO_THROW(point("real_comm"));
  arm("real_comm:1");  // re-arming restarts the count
  EXPECT_THROW(point("real_comm"), Injected);
}

TEST_F(Fault, AllocationSitesThrowBadAlloc) {
  arm("new_comm:1");
  EXPECT_THROW(allocation("new_comm"), std::bad_alloc);
}

TEST_F(Fault, MalformedSpecsLeaveInjectionOff) {
  for (const char* spec : {":2", "entry:", "entry:0", "entry:-1", "entry:2x",
                           "a_site_name_longer_than_the_sixty_three_characters_that_fit_in_the_buffer"}) {
    testing::internal::CaptureStderr();
    arm(spec);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("PURLIN_FAULT_INJECT"), std::string::npos) << spec << ": " << err;
    EXPECT_NO_THROW(point("entry")) << spec;
  }
}

TEST_F(Fault, ReloadReadsTheEnvironment) {
  ASSERT_EQ(setenv("PURLIN_FAULT_INJECT", "thread:2", 1), 0);
  reload();
  EXPECT_NO_THROW(point("thread"));
  EXPECT_THROW(point("thread"), Injected);
  ASSERT_EQ(unsetenv("PURLIN_FAULT_INJECT"), 0);
  reload();
  EXPECT_NO_THROW(point("thread"));
}

}  // namespace
}  // namespace purlin::fault
