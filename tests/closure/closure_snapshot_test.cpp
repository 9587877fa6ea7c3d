// The closure kept beside a memo: its encoding round trip, and the checks
// that refuse to take it again for a source whose preprocessing changed or
// a memo of another closure.
#include "closure/closure_snapshot.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "preprocessor/macro_reads.h"
#include "preprocessor/macro_table.h"

namespace lexpack::closure {
namespace {

Closure two_files() {
  Closure c;
  auto paths = std::make_shared<std::string>("m.cppinc/a.hinc/missing.h");
  std::string_view all = *paths;
  ClosureFile source;
  source.path = all.substr(0, 5);
  source.content = cache::hash_bytes("int v;");
  source.stat.ino = 7;
  source.stat.mtime_ns = 1000;
  ClosureFile header;
  header.path = all.substr(5, 7);
  header.content = cache::hash_bytes("#define V 1");
  header.once_twin = true;
  c.files = {source, header};
  c.failed_probes = {all.substr(12)};
  c.failed_probe_dirs = {3};
  c.source_preprocessing = cache::hash_bytes("directives");
  c.uses_date = true;
  c.computed_evaluated = true;
  c.once_twins = "twins";
  c.storage = paths;
  return c;
}

TEST(ClosureSnapshot, RoundTrip) {
  const Closure c = two_files();
  const cache::Hash128 key = cache::hash_bytes("key");
  Closure back;
  cache::Hash128 back_key;
  ASSERT_TRUE(decode_closure_snapshot(encode_closure_snapshot(c, key), &back, &back_key));
  EXPECT_EQ(back_key, key);
  ASSERT_EQ(back.files.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.files[i].path, c.files[i].path);
    EXPECT_EQ(back.files[i].content, c.files[i].content);
    EXPECT_EQ(back.files[i].stat, c.files[i].stat);
    EXPECT_EQ(back.files[i].once_twin, c.files[i].once_twin);
  }
  ASSERT_EQ(back.failed_probes.size(), 1u);
  EXPECT_EQ(back.failed_probes[0], "inc/missing.h");
  EXPECT_EQ(back.failed_probe_dirs, c.failed_probe_dirs);
  EXPECT_EQ(back.source_preprocessing, c.source_preprocessing);
  EXPECT_TRUE(back.uses_date);
  EXPECT_FALSE(back.uses_time);
  EXPECT_TRUE(back.computed_evaluated);
  EXPECT_EQ(back.once_twins, "twins");
}

TEST(ClosureSnapshot, RejectsForeignAndTruncatedBytes) {
  const std::string bytes = encode_closure_snapshot(two_files(), cache::hash_bytes("key"));
  Closure back;
  cache::Hash128 key;
  EXPECT_FALSE(decode_closure_snapshot("", &back, &key));
  EXPECT_FALSE(decode_closure_snapshot("lexpack-summary-4", &back, &key));
  for (size_t n : {size_t(1), bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_FALSE(decode_closure_snapshot(bytes.substr(0, n), &back, &key)) << n;
  }
}

// The source's preprocessing fingerprint is read from the head alone: an
// edit of the directives is told before the paths are decoded.
TEST(ClosureSnapshot, HeadTellsTheSourcePreprocessing) {
  const Closure c = two_files();
  const std::string bytes = encode_closure_snapshot(c, cache::hash_bytes("key"));
  cache::Hash128 preprocessing;
  ASSERT_TRUE(snapshot_source_preprocessing(bytes, &preprocessing));
  EXPECT_EQ(preprocessing, c.source_preprocessing);
  EXPECT_FALSE(snapshot_source_preprocessing("lexpack-summary-4", &preprocessing));
  EXPECT_FALSE(snapshot_source_preprocessing(bytes.substr(0, 20), &preprocessing));
}

// The source's inert fingerprint and the macro reads go with the snapshot,
// and are read from its head; reads that a build of another name hash made
// cannot be told.
TEST(ClosureSnapshot, HeadTellsTheInertFingerprintAndTheMacroReads) {
  Closure c = two_files();
  c.source_inert = cache::hash_bytes("inert");
  auto reads = std::make_shared<preprocessor::MacroReads>();
  reads->add(preprocessor::macro_name_hash("USED"));
  c.macro_reads = reads;
  const std::string bytes = encode_closure_snapshot(c, cache::hash_bytes("key"));
  SnapshotInert head;
  ASSERT_TRUE(snapshot_source_inert(bytes, &head));
  EXPECT_EQ(head.fingerprint, c.source_inert);
  EXPECT_TRUE(head.reads_known);
  ASSERT_TRUE(head.reads.has_value());
  EXPECT_TRUE(
      preprocessor::MacroReads::may_have_read(*head.reads, preprocessor::macro_name_hash("USED")));
  EXPECT_FALSE(preprocessor::MacroReads::may_have_read(*head.reads,
                                                       preprocessor::macro_name_hash("UNREAD")));
  Closure back;
  cache::Hash128 key;
  ASSERT_TRUE(decode_closure_snapshot(bytes, &back, &key));
  EXPECT_EQ(back.source_inert, c.source_inert);
  ASSERT_TRUE(back.macro_reads);
  EXPECT_EQ(back.macro_reads->bits(), reads->bits());
  // An evaluation whose reads were not kept: not known.
  c.macro_reads.reset();
  ASSERT_TRUE(snapshot_source_inert(encode_closure_snapshot(c, key), &head));
  EXPECT_FALSE(head.reads_known);
  // No evaluation: nothing read.
  c.computed_evaluated = false;
  ASSERT_TRUE(snapshot_source_inert(encode_closure_snapshot(c, key), &head));
  EXPECT_TRUE(head.reads_known);
  EXPECT_FALSE(head.reads.has_value());
  EXPECT_FALSE(snapshot_source_inert(bytes.substr(0, 40), &head));
}

ClosureMemo memo_of(const Closure& c, const cache::Hash128& key) {
  ClosureMemo m;
  m.action_key = key;
  for (const ClosureFile& f : c.files)
    m.dependencies.push_back({std::string(f.path), f.stat, f.content});
  return m;
}

TEST(ClosureSnapshot, RefusedWhenPreprocessingOrMemoDiffers) {
  const Closure c = two_files();
  const cache::Hash128 key = cache::hash_bytes("key");
  const std::string snapshot = encode_closure_snapshot(c, key);
  base::StatSignature now;
  now.ino = 7;
  now.mtime_ns = 2000;
  const cache::Hash128 content = cache::hash_bytes("int v = 2;");
  std::string why;
  EXPECT_FALSE(closure_with_new_source(snapshot, memo_of(c, key), now, content,
                                       cache::hash_bytes("other directives"), nullptr, nullptr,
                                       &why));
  EXPECT_EQ(why, "its directives changed");
  EXPECT_FALSE(closure_with_new_source(snapshot, memo_of(c, cache::hash_bytes("another key")), now,
                                       content, c.source_preprocessing, nullptr, nullptr, &why));
  EXPECT_EQ(why, "its closure memo is of another closure");
  // New content that is a header's: the twins of #pragma once may change.
  EXPECT_FALSE(closure_with_new_source(snapshot, memo_of(c, key), now, c.files[1].content,
                                       c.source_preprocessing, nullptr, nullptr, &why));
  EXPECT_NE(why.find("inc/a.h"), std::string::npos) << why;
  // Only its head is read for the first question; the rest, when the
  // directives match, must be whole.
  const size_t head = snapshot.size() - 40;
  EXPECT_FALSE(closure_with_new_source(snapshot.substr(0, head), memo_of(c, key), now, content,
                                       cache::hash_bytes("other directives"), nullptr, nullptr,
                                       &why));
  EXPECT_EQ(why, "its directives changed");
  EXPECT_FALSE(closure_with_new_source(snapshot.substr(0, head), memo_of(c, key), now, content,
                                       c.source_preprocessing, nullptr, nullptr, &why));
  EXPECT_EQ(why, "no closure kept for it");
}

// Other directives are taken only with the snapshot's inert fingerprint.
TEST(ClosureSnapshot, OtherDirectivesTakenByTheInertFingerprintAlone) {
  Closure c = two_files();
  c.source_inert = cache::hash_bytes("inert");
  const cache::Hash128 key = cache::hash_bytes("key");
  const std::string snapshot = encode_closure_snapshot(c, key);
  base::StatSignature now;
  now.ino = 7;
  const cache::Hash128 content = cache::hash_bytes("#define UNREAD 1\nint v;");
  const cache::Hash128 other = cache::hash_bytes("other directives");
  const cache::Hash128 other_inert = cache::hash_bytes("other inert");
  std::string why;
  EXPECT_FALSE(closure_with_new_source(snapshot, memo_of(c, key), now, content, other, &other_inert,
                                       nullptr, &why));
  EXPECT_EQ(why, "its directives changed");
  const cache::Hash128 zero;
  EXPECT_FALSE(closure_with_new_source(snapshot, memo_of(c, key), now, content, other, &zero,
                                       nullptr, &why));
  EXPECT_EQ(why, "its directives changed");
  // Past the directives: the memo's files are checked next (not there here).
  EXPECT_FALSE(closure_with_new_source(snapshot, memo_of(c, key), now, content, other,
                                       &c.source_inert, nullptr, &why));
  EXPECT_NE(why, "its directives changed");
  EXPECT_NE(why.find("also"), std::string::npos) << why;
}

}  // namespace
}  // namespace lexpack::closure
