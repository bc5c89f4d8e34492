// The shrinker model (kernel_shim/shrinker.h): registration, shrink_all's count-then-scan in
// batches, SHRINK_STOP and SHRINK_EMPTY, and unregistering on free.
#include <gtest/gtest.h>

#include <cstring>

#include "kernel_shim/shrinker.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

namespace {

// A cache of `objects` reclaimable objects; scan frees what it is asked for.
struct Cache {
    unsigned long objects = 0;
    unsigned long scans = 0;
    unsigned long last_nr_to_scan = 0;
    bool contended = false;
};

unsigned long cache_count(shrinker* s, shrink_control*) {
    auto* c = static_cast<Cache*>(s->private_data);
    return c->objects ? c->objects : SHRINK_EMPTY;
}
unsigned long cache_scan(shrinker* s, shrink_control* sc) {
    auto* c = static_cast<Cache*>(s->private_data);
    c->scans++;
    c->last_nr_to_scan = sc->nr_to_scan;
    if (c->contended)
        return SHRINK_STOP;
    const unsigned long n = std::min(c->objects, sc->nr_to_scan);
    c->objects -= n;
    return n;
}

shrinker* make(Cache* c, long batch = 0) {
    shrinker* s = shrinker_alloc(0, "test-%d", 1);
    EXPECT_NE(s, nullptr);
    s->count_objects = cache_count;
    s->scan_objects = cache_scan;
    s->private_data = c;
    s->batch = batch;
    return s;
}

}  // namespace

class Shrinker : public kshim::testing::KernelTest {};

TEST_F(Shrinker, ShrinkAllScansRegisteredShrinkersInBatches) {
    Cache c{.objects = 300};
    shrinker* s = make(&c);
    EXPECT_STREQ(s->name, "test-1");
    EXPECT_EQ(shrink_all(1000), 0u) << "not registered yet";
    const size_t before = shrinker_count_registered();
    shrinker_register(s);
    EXPECT_EQ(shrinker_count_registered(), before + 1);

    EXPECT_EQ(shrink_all(200), 200u);
    EXPECT_EQ(c.objects, 100u);
    EXPECT_EQ(c.scans, 2u) << "128 + 72";
    EXPECT_EQ(c.last_nr_to_scan, 72u);

    EXPECT_EQ(shrink_all(1000), 100u) << "no more than the count";
    EXPECT_EQ(c.objects, 0u);
    c.scans = 0;
    EXPECT_EQ(shrink_all(1000), 0u);
    EXPECT_EQ(c.scans, 0u) << "SHRINK_EMPTY: not scanned";

    shrinker_free(s);
    EXPECT_EQ(shrinker_count_registered(), before);
    shrinker_free(nullptr);
}

TEST_F(Shrinker, ShrinkStopEndsTheScanAndBatchIsHonoured) {
    Cache c{.objects = 50};
    shrinker* s = make(&c, 10);
    shrinker_register(s);
    c.contended = true;
    EXPECT_EQ(shrink_all(1000), 0u);
    EXPECT_EQ(c.scans, 1u);
    c.contended = false;
    c.scans = 0;
    EXPECT_EQ(shrink_all(25), 25u);
    EXPECT_EQ(c.scans, 3u) << "10 + 10 + 5";
    EXPECT_EQ(c.last_nr_to_scan, 5u);
    shrinker_free(s);
}
