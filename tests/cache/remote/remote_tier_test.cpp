// The remote tier against real servers: redis-server and nginx on free local
// ports. Hits, misses, and the faults a team's build meets: a stopped
// server, a refused port, a server that never answers, corrupted or swapped
// entries. None may fail or stall; each is counted.
#include "cache/remote/remote_tier.h"
#include "cache/remote/transfer_pace.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include "tests/support/servers.h"
#include "tests/support/test_dir.h"

namespace lexpack::cache::remote {
namespace {

using lexpack::testing::BlackHole;
using lexpack::testing::FixedReplyServer;
using lexpack::testing::NginxServer;
using lexpack::testing::RedisServer;
using lexpack::testing::TestDir;

RemoteEntry sample(char fill) {
  RemoteEntry e;
  e.outputs.push_back({"object", std::string(3000, fill)});
  e.out = std::string(1, fill);
  return e;
}

struct Counts {
  std::map<std::string, int64_t> n;
  CountFn fn() {
    return [this](std::string_view name, int64_t d) { n[std::string(name)] += d; };
  }
};

class Tier : public ::testing::Test {
 protected:
  std::unique_ptr<RemoteTier> open(const std::string& storage) {
    Config c;
    c.dir = cache_.path();
    c.remote_storage = storage;
    std::string error;
    auto tier = RemoteTier::open(c, &error);
    EXPECT_TRUE(error.empty()) << error;
    return tier;
  }
  void round_trip(const std::string& url) {
    auto tier = open(url);
    ASSERT_TRUE(tier);
    Counts c;
    std::string note;
    Hash128 key{1, 2};
    EXPECT_FALSE(tier->fetch(key, c.fn(), &note));
    EXPECT_EQ(c.n["remote_misses"], 1) << note;
    tier->upload(key, sample('a'), c.fn(), &note);
    EXPECT_EQ(c.n["remote_uploads"], 1) << note;
    EXPECT_GT(c.n["remote_bytes_out"], 0);
    // Another machine: its own cache dir, the same server.
    TestDir other;
    Config oc;
    oc.dir = other.path();
    oc.remote_storage = url;
    std::string error;
    auto b = RemoteTier::open(oc, &error);
    std::optional<RemoteEntry> got = b->fetch(key, c.fn(), &note);
    ASSERT_TRUE(got) << note;
    EXPECT_EQ(got->outputs[0].bytes, std::string(3000, 'a'));
    EXPECT_EQ(c.n["remote_hits"], 1);
    EXPECT_FALSE(b->fetch(Hash128{1, 3}, c.fn(), &note));
  }

  TestDir cache_;
};

TEST_F(Tier, RedisRoundTrip) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  round_trip(redis.url());
}

TEST_F(Tier, NginxRoundTrip) {
  NginxServer nginx;
  ASSERT_TRUE(nginx.start());
  round_trip(nginx.url());
}

TEST_F(Tier, HttpsRoundTrip) {
  NginxServer nginx;
  ASSERT_TRUE(nginx.start(true));
  round_trip(nginx.url() + "|ca-file=" + nginx.ca_file());
}

// A server whose certificate is not trusted is an error (counted, marked
// down), never a silent plain-text fallback.
TEST_F(Tier, HttpsWithAnUntrustedCertificateIsAnError) {
  NginxServer nginx;
  ASSERT_TRUE(nginx.start(true));
  auto tier = open(nginx.url());
  Counts c;
  std::string note;
  EXPECT_FALSE(tier->fetch(Hash128{6, 6}, c.fn(), &note));
  EXPECT_EQ(c.n["remote_errors"], 1) << note;
  EXPECT_NE(note.find("certificate"), std::string::npos) << note;
  EXPECT_FALSE(tier->upload(Hash128{6, 6}, sample('u'), c.fn(), &note));
}

TEST_F(Tier, ReadOnlyRemoteIsNotWritten) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  auto tier = open(redis.url() + "|read-only");
  Counts c;
  std::string note;
  tier->upload(Hash128{5, 5}, sample('r'), c.fn(), &note);
  EXPECT_EQ(c.n["remote_uploads"], 0);
  auto backend = make_backend(*parse_remote_spec(redis.url()));
  EXPECT_EQ(backend->exists(Hash128{5, 5}.hex()).outcome, Outcome::kMiss);
}

TEST_F(Tier, CorruptedAndSwappedEntriesAreRefused) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  auto backend = make_backend(*parse_remote_spec(redis.url()));
  Hash128 k1{7, 1}, k2{7, 2};
  std::string good = encode_entry(k1, sample('x'));
  ASSERT_EQ(backend->put(k2.hex(), good).outcome, Outcome::kStored);  // swapped
  std::string bad = good;
  bad[bad.size() / 2] ^= 1;
  ASSERT_EQ(backend->put(k1.hex(), bad).outcome, Outcome::kStored);  // corrupted
  auto tier = open(redis.url());
  Counts c;
  std::string note;
  EXPECT_FALSE(tier->fetch(k1, c.fn(), &note));
  EXPECT_FALSE(tier->fetch(k2, c.fn(), &note));
  EXPECT_EQ(c.n["remote_bad_entries"], 2) << note;
  EXPECT_EQ(c.n["remote_hits"], 0);
}

// With remote_secret set, someone who can write to the server but does not
// know the secret cannot poison a build: unsigned entries and entries signed
// with another secret are refused and counted; the team's own entries hit.
TEST_F(Tier, SignedRemoteRefusesEntriesWithoutTheSecret) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  const std::string secret = "the team's remote secret";
  Config team;
  team.dir = cache_.path();
  team.remote_storage = redis.url();
  team.remote_secret = secret;
  std::string error;
  auto writer = RemoteTier::open(team, &error);
  ASSERT_TRUE(writer) << error;
  Counts c;
  std::string note;
  Hash128 good{9, 1}, forged{9, 2}, other_secret{9, 3};
  writer->upload(good, sample('g'), c.fn(), &note);
  ASSERT_EQ(c.n["remote_uploads"], 1) << note;
  auto backend = make_backend(*parse_remote_spec(redis.url()));
  ASSERT_EQ(backend->put(forged.hex(), encode_entry(forged, sample('f'))).outcome,
            Outcome::kStored);
  ASSERT_EQ(backend
                ->put(other_secret.hex(),
                      encode_entry(other_secret, sample('o'), "somebody else's secret"))
                .outcome,
            Outcome::kStored);
  TestDir other;
  team.dir = other.path();
  auto reader = RemoteTier::open(team, &error);
  std::optional<RemoteEntry> got = reader->fetch(good, c.fn(), &note);
  ASSERT_TRUE(got) << note;
  EXPECT_EQ(got->outputs[0].bytes, std::string(3000, 'g'));
  EXPECT_FALSE(reader->fetch(forged, c.fn(), &note));
  EXPECT_FALSE(reader->fetch(other_secret, c.fn(), &note));
  EXPECT_EQ(c.n["remote_bad_entries"], 2) << note;
  EXPECT_NE(note.find("not signed"), std::string::npos) << note;
  // A machine without the secret still reads the team's checked entries.
  team.remote_secret.clear();
  auto plain_reader = RemoteTier::open(team, &error);
  EXPECT_TRUE(plain_reader->fetch(good, c.fn(), &note)) << note;
}

// fetch_many: present, absent and corrupted keys in one call, on both
// schemes; each answered as fetch() would.
TEST_F(Tier, FetchManyAnswersEachKeyLikeFetch) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  NginxServer nginx;
  ASSERT_TRUE(nginx.start());
  for (const std::string& url : {redis.url(), nginx.url()}) {
    auto tier = open(url);
    Counts c;
    std::string note;
    std::vector<Hash128> keys;
    for (uint64_t i = 0; i < 100; ++i) keys.push_back(Hash128{40, i});
    for (uint64_t i = 0; i < 100; i += 2) {
      ASSERT_TRUE(tier->upload(keys[i], sample(char('a' + i % 26)), c.fn(), &note)) << note;
    }
    auto backend = make_backend(*parse_remote_spec(url));
    std::string bad = encode_entry(keys[4], sample('z'));
    bad[bad.size() - 2] ^= 1;
    Reply put = backend->put(keys[4].hex(), bad);
    ASSERT_EQ(put.outcome, Outcome::kStored) << url << ": " << put.error;
    std::vector<std::optional<RemoteEntry>> got = tier->fetch_many(keys, c.fn(), &note);
    ASSERT_EQ(got.size(), keys.size());
    for (uint64_t i = 0; i < 100; ++i) {
      if (i % 2 == 1 || i == 4) {
        EXPECT_FALSE(got[i]) << url << " key " << i;
      } else {
        ASSERT_TRUE(got[i]) << url << " key " << i << ": " << note;
        EXPECT_EQ(got[i]->outputs[0].bytes, std::string(3000, char('a' + i % 26)));
      }
    }
    EXPECT_EQ(c.n["remote_hits"], 49) << url;
    EXPECT_EQ(c.n["remote_misses"], 50) << url;
    EXPECT_EQ(c.n["remote_bad_entries"], 1) << url;
  }
}

// A reply that claims more than any entry can be is refused before anything
// is read or allocated; a garbled one is refused too. Both are a miss.
TEST_F(Tier, OversizedOrGarbledRepliesAreAMiss) {
  for (const std::string& reply :
       {std::string("HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\nLXRE"),
        std::string("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nLXRE"),
        std::string("garbage\r\n\r\n")}) {
    FixedReplyServer liar(reply);
    TestDir other;
    Config c;
    c.dir = other.path();
    c.remote_storage = "http://127.0.0.1:" + std::to_string(liar.port()) + "/c";
    std::string error;
    auto tier = RemoteTier::open(c, &error);
    Counts n;
    std::string note;
    auto t = std::chrono::steady_clock::now();
    EXPECT_FALSE(tier->fetch(Hash128{3, 3}, n.fn(), &note)) << reply;
    EXPECT_LT(std::chrono::steady_clock::now() - t, std::chrono::seconds(5)) << reply;
    EXPECT_EQ(n.n["remote_hits"], 0) << reply;
    EXPECT_EQ(n.n["remote_errors"] + n.n["remote_bad_entries"], 1) << reply << note;
  }
}

// A full Redis (maxmemory, noeviction) refuses writes: the upload is a
// counted error, nothing breaks, and what was stored before still hits.
TEST_F(Tier, FullRedisRefusesUploadsQuietly) {
  RedisServer redis;
  ASSERT_TRUE(redis.start({"--maxmemory", "2mb", "--maxmemory-policy", "noeviction"}));
  auto tier = open(redis.url());
  Counts c;
  std::string note;
  std::mt19937_64 rng(7);
  auto big = [&rng] {
    RemoteEntry e;
    std::string bytes(400 << 10, '\0');
    for (char& ch : bytes) ch = char(rng());  // incompressible
    e.outputs.push_back({"object", bytes});
    return e;
  };
  ASSERT_TRUE(tier->upload(Hash128{8, 0}, sample('s'), c.fn(), &note)) << note;
  bool refused = false;
  for (uint64_t i = 1; i < 40 && !refused; ++i) {
    refused = !tier->upload(Hash128{8, i}, big(), c.fn(), &note);
  }
  ASSERT_TRUE(refused) << "the server never filled up";
  EXPECT_EQ(c.n["remote_errors"], 1) << note;
  EXPECT_NE(note.find("OOM"), std::string::npos) << note;
  // Another machine still reads what is there.
  TestDir other;
  Config oc;
  oc.dir = other.path();
  oc.remote_storage = redis.url();
  std::string error;
  auto reader = RemoteTier::open(oc, &error);
  EXPECT_TRUE(reader->fetch(Hash128{8, 0}, c.fn(), &note)) << note;
}

TEST_F(Tier, BatchedGet) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  NginxServer nginx;
  ASSERT_TRUE(nginx.start());
  for (const std::string& url : {redis.url(), nginx.url()}) {
    auto backend = make_backend(*parse_remote_spec(url));
    ASSERT_EQ(backend->put("aa11", "one").outcome, Outcome::kStored);
    ASSERT_EQ(backend->put("bb22", "two").outcome, Outcome::kStored);
    std::vector<std::string> keys = {"aa11", "cc33", "bb22"};
    std::vector<Reply> r = backend->get_many(keys);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].bytes, "one") << url;
    EXPECT_EQ(r[1].outcome, Outcome::kMiss) << url;
    EXPECT_EQ(r[2].bytes, "two") << url;
    EXPECT_EQ(backend->exists("bb22").outcome, Outcome::kHit) << url;
  }
}

// HTTP asks a batch pipelined on one connection: the replies come back in
// order, hits and misses, small and larger than a socket's buffer, also from
// a server that closes the connection every few requests (the rest are
// asked on a new one) or closed the kept one while it was idle (asked
// again on a new one).
TEST_F(Tier, PipelinedGetsAnswerEachKeyInOrder) {
  for (const char* lines : {"", "keepalive_requests 3;", "keepalive_timeout 1;"}) {
    NginxServer nginx;
    ASSERT_TRUE(nginx.start(false, lines));
    auto backend = make_backend(*parse_remote_spec(nginx.url()));
    std::vector<std::string> keys;
    std::vector<std::string> want;
    for (int i = 0; i < 40; ++i) {
      keys.push_back(Hash128{uint64_t(i) + 1, 7}.hex());
      if (i % 3 == 1) {
        want.emplace_back();  // a miss
        continue;
      }
      want.push_back(std::string(i % 5 == 0 ? 300000 : 10 + i, char('a' + i % 26)));
      ASSERT_EQ(backend->put(keys.back(), want.back()).outcome, Outcome::kStored) << i;
    }
    for (int round = 0; round < 2; ++round) {
      if (round == 1 && std::string(lines).starts_with("keepalive_timeout")) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      }
      std::vector<Reply> r = backend->get_many(keys);
      ASSERT_EQ(r.size(), keys.size());
      for (size_t i = 0; i < keys.size(); ++i) {
        EXPECT_EQ(r[i].outcome, want[i].empty() ? Outcome::kMiss : Outcome::kHit)
            << lines << " " << i << " " << r[i].error;
        EXPECT_EQ(r[i].bytes, want[i]) << lines << " " << i;
      }
    }
  }
}

int64_t ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t)
      .count();
}

TEST_F(Tier, StoppedServerIsAMissAndMarkedDownForEveryProcess) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  std::string url = redis.url();
  redis.stop();
  auto tier = open(url);
  Counts c;
  std::string note;
  EXPECT_FALSE(tier->fetch(Hash128{1, 1}, c.fn(), &note));
  EXPECT_EQ(c.n["remote_errors"], 1) << note;
  // A second tier (another compile) does not even try.
  auto again = open(url);
  note.clear();
  EXPECT_FALSE(again->fetch(Hash128{1, 1}, c.fn(), &note));
  EXPECT_EQ(c.n["remote_errors"], 1) << note;
  EXPECT_NE(note.find("marked down"), std::string::npos) << note;
  again->upload(Hash128{1, 1}, sample('s'), c.fn(), &note);
  EXPECT_EQ(c.n["remote_uploads"], 0);
}

TEST_F(Tier, RefusedPortIsAMiss) {
  int port = lexpack::testing::free_port();
  for (const std::string& url : {"redis://127.0.0.1:" + std::to_string(port),
                                 "http://127.0.0.1:" + std::to_string(port) + "/c"}) {
    TestDir dir;
    Config cfg;
    cfg.dir = dir.path();
    cfg.remote_storage = url;
    std::string error;
    auto tier = RemoteTier::open(cfg, &error);
    Counts c;
    std::string note;
    auto t = std::chrono::steady_clock::now();
    EXPECT_FALSE(tier->fetch(Hash128{2, 2}, c.fn(), &note));
    EXPECT_LT(ms_since(t), 1000);
    EXPECT_EQ(c.n["remote_errors"], 1) << note;
  }
}

TEST_F(Tier, ServerThatNeverAnswersCostsOneTimeout) {
  BlackHole hole;
  for (const std::string scheme : {"redis://", "http://"}) {
    TestDir dir;
    Config cfg;
    cfg.dir = dir.path();
    cfg.remote_storage = scheme + "127.0.0.1:" + std::to_string(hole.port()) +
                         (scheme == "http://" ? "/c" : "") + "|operation-timeout=300";
    std::string error;
    auto tier = RemoteTier::open(cfg, &error);
    Counts c;
    std::string note;
    auto t = std::chrono::steady_clock::now();
    EXPECT_FALSE(tier->fetch(Hash128{3, 3}, c.fn(), &note));
    int64_t first = ms_since(t);
    EXPECT_GE(first, 250) << scheme;
    EXPECT_LT(first, 3000) << scheme;
    EXPECT_EQ(c.n["remote_timeouts"], 1) << scheme << note;
    t = std::chrono::steady_clock::now();
    auto again = RemoteTier::open(cfg, &error);
    EXPECT_FALSE(again->fetch(Hash128{3, 3}, c.fn(), &note));
    EXPECT_LT(ms_since(t), 100) << scheme;  // marked down: not tried
  }
}

// A remote is judged by its answers, not its connections: one that accepts
// and never answers fails at the first-byte deadline (default 500 ms), long
// before the operation timeout (10 s by default), and is marked down.
TEST_F(Tier, NoFirstByteWithinTheDeadlineIsATimeout) {
  BlackHole hole;
  for (const std::string scheme : {"redis://", "http://"}) {
    TestDir dir;
    Config cfg;
    cfg.dir = dir.path();
    cfg.remote_storage =
        scheme + "127.0.0.1:" + std::to_string(hole.port()) + (scheme == "http://" ? "/c" : "");
    std::string error;
    auto tier = RemoteTier::open(cfg, &error);
    Counts c;
    std::string note;
    auto t = std::chrono::steady_clock::now();
    EXPECT_FALSE(tier->fetch(Hash128{3, 4}, c.fn(), &note));
    EXPECT_LT(ms_since(t), 3000) << scheme;
    EXPECT_EQ(c.n["remote_timeouts"], 1) << scheme << note;
    if (scheme == "http://") {
      EXPECT_NE(note.find("no reply within 500 ms"), std::string::npos) << note;
    }
  }
}

// A server that answers a byte at a time, or ever so slowly, is as sick as
// one that never answers: the transfer falls below the minimum rate and the
// request fails within a fraction of a second, not after the operation timeout.
TEST_F(Tier, AReplySlowerThanTheMinimumRateIsATimeout) {
  const std::string reply =
      "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + std::string(100000, 'x');
  FixedReplyServer trickle(reply, 20);
  Config cfg;
  cfg.dir = cache_.path();
  cfg.remote_storage = "http://127.0.0.1:" + std::to_string(trickle.port()) + "/c";
  std::string error;
  auto tier = RemoteTier::open(cfg, &error);
  Counts c;
  std::string note;
  auto t = std::chrono::steady_clock::now();
  EXPECT_FALSE(tier->fetch(Hash128{3, 5}, c.fn(), &note));
  EXPECT_LT(ms_since(t), 3000);
  EXPECT_EQ(c.n["remote_timeouts"], 1) << note;
  EXPECT_NE(note.find("slower than"), std::string::npos) << note;
  // Configurable per remote: without a rate check the same server is waited
  // for until the operation timeout.
  auto spec = parse_remote_spec("http://127.0.0.1:1/c|first-byte-timeout=250|min-rate=0");
  ASSERT_TRUE(spec.ok()) << spec.message();
  EXPECT_EQ(spec->first_byte_timeout_ms, 250);
  EXPECT_EQ(spec->min_rate, 0);
  EXPECT_FALSE(parse_remote_spec("http://127.0.0.1:1/c|first-byte-timeout=0").ok());
}

// A check turned off (min-rate=0) is a pace that never gives up:
// time_point::max(), which poll must get as a long wait, never as a negative
// (endless) one from an int that overflowed.
TEST(PollTimeout, IsClampedToWhatPollTakes) {
  using Clock = Pace::Clock;
  EXPECT_EQ(poll_ms_until(Clock::time_point::max()), std::numeric_limits<int>::max());
  EXPECT_EQ(poll_ms_until(Clock::now() - std::chrono::seconds(1)), 0);
  int soon = poll_ms_until(Clock::now() + std::chrono::milliseconds(100));
  EXPECT_GE(soon, 0);
  EXPECT_LE(soon, 100);
}

// A remote_secret too short to be one stops the remote tier, with a reason:
// a reader that believes it checks signatures must never take unsigned entries.
TEST_F(Tier, AShortSecretStopsTheRemoteTier) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  auto backend = make_backend(*parse_remote_spec(redis.url()));
  Hash128 forged{9, 7};
  ASSERT_EQ(backend->put(forged.hex(), encode_entry(forged, sample('f'))).outcome,
            Outcome::kStored);
  TestDir dir;
  std::ofstream(dir.at(kConfigFileName)) << "remote_secret = short\n";
  ::unsetenv("LEXPACK_REMOTE_SECRET");
  ::unsetenv("LEXPACK_REMOTE_STORAGE");
  Config cfg = load_config(dir.path());
  cfg.remote_storage = redis.url();
  std::string error;
  auto tier = RemoteTier::open(cfg, &error);
  EXPECT_FALSE(tier);
  EXPECT_NE(error.find("remote_secret"), std::string::npos) << error;
}

// After its down time one process tries the remote again; the others keep
// skipping it until that one has an answer, instead of every compile paying
// the deadline at once. Why it was marked down is kept for the summary.
TEST_F(Tier, AfterTheDownTimeOneProcessTriesAgain) {
  BlackHole hole;
  Config cfg;
  cfg.dir = cache_.path();
  cfg.remote_storage = "redis://127.0.0.1:" + std::to_string(hole.port());
  std::string error;
  auto first = RemoteTier::open(cfg, &error);
  Counts c;
  std::string note;
  EXPECT_FALSE(first->fetch(Hash128{5, 1}, c.fn(), &note));
  std::vector<std::string> down = RemoteTier::down_reports(cfg, 0);
  ASSERT_EQ(down.size(), 1u);
  EXPECT_NE(down[0].find("timed out"), std::string::npos) << down[0];
  // The down time is over.
  const std::string marker =
      RemoteTier::marker_path(cfg.dir, *parse_remote_spec(cfg.remote_storage));
  std::ofstream(marker) << "1 1\nan old failure\n";
  auto prober = RemoteTier::open(cfg, &error);
  auto other = RemoteTier::open(cfg, &error);
  std::thread probing([&] {
    Counts pc;
    std::string pn;
    prober->fetch(Hash128{5, 2}, pc.fn(), &pn);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto t = std::chrono::steady_clock::now();
  note.clear();
  EXPECT_FALSE(other->fetch(Hash128{5, 3}, c.fn(), &note));
  EXPECT_LT(ms_since(t), 100);
  EXPECT_NE(note.find("marked down"), std::string::npos) << note;
  probing.join();
  EXPECT_EQ(RemoteTier::down_reports(cfg, 2).size(), 1u);  // the prober marked it down again
}

}  // namespace
}  // namespace lexpack::cache::remote
