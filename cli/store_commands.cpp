// The cache maintenance commands: stats, gc, verify, clear, export (whole or
// the last build's working set), import and config. They open the store, call one operation and
// print its outcome.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "base/json_string.h"
#include "cache/archive/archive.h"
#include "cache/archive/working_set.h"
#include "cache/config/config.h"
#include "cache/remote/remote_tier.h"
#include "cache/store.h"
#include "cli/commands.h"
#include "ninja_integration/build_record.h"
#include "server/server_client.h"

namespace lexpack::cli {

namespace {

using base::json_string;
using base::Status;
using cache::Store;

int fail(const std::string& message) {
  std::fprintf(stderr, "lexpack: error: %s\n", message.c_str());
  return 1;
}

void print_messages(Store& store) {
  for (const auto& m : store.take_messages())
    std::fprintf(stderr, "lexpack: warning: %s\n", m.c_str());
}

std::unique_ptr<Store> open_store(int* exit_code) {
  auto opened = Store::open(cache::StoreOptions{});
  if (!opened.ok()) {
    *exit_code = fail(opened.message());
    return nullptr;
  }
  print_messages(*opened.value());
  return std::move(opened.value());
}

// `build_dir` empty: the last build of any directory.
int export_working_set(Store& store, const std::string& file, const std::string& build_dir) {
  std::string record = ninja_integration::last_build_record(store.dir());
  if (!build_dir.empty()) {
    char buf[PATH_MAX];
    if (!::realpath(build_dir.c_str(), buf)) return fail(build_dir + ": no such directory");
    record = ninja_integration::build_dir_record(store.dir(), buf);
    if (::access(record.c_str(), F_OK) != 0) {
      return fail(std::string("no build of ") + buf + " through `lexpack ninja` with this cache");
    }
  }
  std::string built_in;
  auto keys = ninja_integration::read_build_record(record, &built_in);
  if (!keys.ok()) return fail(keys.message());
  auto report = cache::export_working_set(store, *keys, file);
  print_messages(store);
  if (!report.ok()) return fail(report.message());
  std::printf("exported the working set of the last build%s%s: %llu actions, %llu blobs, %.1f MB",
              built_in.empty() ? "" : " of ", built_in.c_str(),
              static_cast<unsigned long long>(report->actions),
              static_cast<unsigned long long>(report->blobs), double(report->blob_bytes) / 1e6);
  if (report->missing_actions) {
    std::printf(", %llu no longer in the cache",
                static_cast<unsigned long long>(report->missing_actions));
  }
  std::printf("\n");
  return 0;
}

int64_t counter(const cache::StoreStats& s, const char* name) {
  auto it = s.counters.find(name);
  return it == s.counters.end() ? 0 : it->second;
}

void print_stats(const std::string& dir, const cache::StoreStats& s, bool json) {
  using ull = unsigned long long;
  if (json) {
    std::printf(
        "{\"dir\": %s, \"blobs\": %llu, \"actions\": %llu, \"files\": %llu, \"memos\": %llu, "
        "\"blob_bytes\": %llu, \"pack_bytes\": %llu, \"packs\": %llu, \"index_bytes\": %llu, "
        "\"max_size\": %llu, \"counters\": {",
        base::json_string(dir).c_str(), ull(s.blobs), ull(s.actions), ull(s.files), ull(s.memos),
        ull(s.blob_bytes), ull(s.pack_bytes), ull(s.packs), ull(s.index_bytes), ull(s.max_size));
    bool first = true;
    for (const auto& [name, value] : s.counters) {
      std::printf("%s%s: %lld", first ? "" : ", ", json_string(name).c_str(),
                  static_cast<long long>(value));
      first = false;
    }
    std::printf("}}\n");
    return;
  }
  int64_t hits = counter(s, "hits"), misses = counter(s, "misses");
  double rate =
      hits + misses ? 100.0 * static_cast<double>(hits) / static_cast<double>(hits + misses) : 0;
  std::printf("cache directory   %s\n", dir.c_str());
  std::printf("entries           %llu blobs, %llu actions, %llu files, %llu memo\n", ull(s.blobs),
              ull(s.actions), ull(s.files), ull(s.memos));
  std::printf("size              %s in %llu packs (%s of blobs), index %s, limit %s\n",
              cache::format_size(s.pack_bytes).c_str(), ull(s.packs),
              cache::format_size(s.blob_bytes).c_str(), cache::format_size(s.index_bytes).c_str(),
              cache::format_size(s.max_size).c_str());
  std::printf("hits              %lld (%.1f%%)\n", static_cast<long long>(hits), rate);
  std::printf("misses            %lld\n", static_cast<long long>(misses));
  std::printf("compiler CPU saved %.3f s\n",
              static_cast<double>(counter(s, "time_saved_us")) / 1e6);
  for (const auto& [name, value] : s.counters) {
    if (name == "hits" || name == "misses" || name == "time_saved_us") continue;
    std::printf("%-17s %lld\n", name.c_str(), static_cast<long long>(value));
  }
}

// `lexpack stats`: what the cache holds, and its counters.
void add_stats_command(CLI::App& app, int* exit_code) {
  auto* stats = app.add_subcommand("stats", "Show what the cache holds and how well it works");
  auto json = std::make_shared<bool>(false);
  stats->add_flag("--json", *json, "Print one JSON object");
  stats->callback([exit_code, json] {
    auto store = open_store(exit_code);
    if (!store) return;
    auto s = store->stats();
    if (!s.ok()) {
      *exit_code = fail(s.message());
      return;
    }
    print_stats(store->dir(), s.value(), *json);
    if (!*json) {
      for (const std::string& down :
           cache::remote::RemoteTier::down_reports(cache::load_config(""), 0)) {
        std::printf("%s\n", down.c_str());
      }
    }
  });
}

// `lexpack gc`: the least recently used packs evicted down to a size.
void add_gc_command(CLI::App& app, int* exit_code) {
  auto* gc = app.add_subcommand("gc", "Evict least recently used packs down to the size limit");
  auto max_size = std::make_shared<std::string>();
  gc->add_option("--max-size", *max_size,
                 "Size to shrink to, like 2G or 500M (default: the limit)");
  gc->callback([exit_code, max_size] {
    auto store = open_store(exit_code);
    if (!store) return;
    uint64_t limit = 0;
    if (!max_size->empty()) {
      auto parsed = cache::parse_size(*max_size);
      if (!parsed) {
        *exit_code = fail("--max-size " + *max_size + ": expected a size like 2G, 500M or 64Ki");
        return;
      }
      limit = *parsed;
    } else {
      auto s = store->stats();
      if (!s.ok()) {
        *exit_code = fail(s.message());
        return;
      }
      limit = s->max_size;
    }
    auto report = store->gc(limit);
    print_messages(*store);
    if (!report.ok()) {
      *exit_code = fail(report.message());
      return;
    }
    std::printf("evicted %llu packs (%llu blobs dropped, %llu copied forward): %s -> %s\n",
                static_cast<unsigned long long>(report->packs_evicted),
                static_cast<unsigned long long>(report->blobs_dropped),
                static_cast<unsigned long long>(report->blobs_copied),
                cache::format_size(report->bytes_before).c_str(),
                cache::format_size(report->bytes_after).c_str());
    if (report->leftovers_removed) {
      std::printf("removed %llu temporaries of killed processes\n",
                  static_cast<unsigned long long>(report->leftovers_removed));
    }
  });
}

// `lexpack verify`: every blob and record checked, the bad ones dropped.
void add_verify_command(CLI::App& app, int* exit_code) {
  auto* verify = app.add_subcommand("verify", "Check every blob and record; drop the bad ones");
  verify->callback([exit_code] {
    auto store = open_store(exit_code);
    if (!store) return;
    auto report = store->verify();
    print_messages(*store);
    if (!report.ok()) {
      *exit_code = fail(report.message());
      return;
    }
    for (const auto& p : report->problems) std::printf("bad: %s\n", p.c_str());
    std::printf(
        "checked %llu blobs and %llu records: %llu bad blobs, %llu bad records dropped; "
        "%llu stale actions and %llu orphan packs removed\n",
        static_cast<unsigned long long>(report->blobs_checked),
        static_cast<unsigned long long>(report->records_checked),
        static_cast<unsigned long long>(report->bad_blobs),
        static_cast<unsigned long long>(report->bad_records),
        static_cast<unsigned long long>(report->dangling_actions),
        static_cast<unsigned long long>(report->orphan_packs));
    if (!report->clean()) *exit_code = 1;
  });
}

// `lexpack clear`: the cache emptied.
void add_clear_command(CLI::App& app, int* exit_code) {
  auto* clear = app.add_subcommand("clear", "Remove everything from the cache");
  clear->callback([exit_code] {
    auto store = open_store(exit_code);
    if (!store) return;
    // The server keeps the index it opened: it leaves, so that no hit is
    // served from what was cleared (a compile starts a new one).
    server::control(server::RequestKind::kStop);
    base::Status status = store->clear();
    if (!status.ok()) *exit_code = fail(status.message());
  });
}

// `lexpack export`: the cache, or a build's working set, to one file.
void add_export_command(CLI::App& app, int* exit_code) {
  auto* exp = app.add_subcommand("export", "Write the whole cache to one file");
  auto export_file = std::make_shared<std::string>();
  auto working_set = std::make_shared<bool>(false);
  auto build_dir = std::make_shared<std::string>();
  exp->add_option("FILE", *export_file, "Archive to write")->required();
  exp->add_flag("--working-set", *working_set,
                "Only what the last `lexpack ninja` build used (its hits and stored compiles)");
  exp->add_option("-C", *build_dir,
                  "With --working-set: the last build of this directory, not of any");
  exp->callback([exit_code, export_file, working_set, build_dir] {
    auto store = open_store(exit_code);
    if (!store) return;
    if (!build_dir->empty() && !*working_set) {
      *exit_code = fail("-C goes with --working-set");
      return;
    }
    if (*working_set) {
      *exit_code = export_working_set(*store, *export_file, *build_dir);
      return;
    }
    base::Status status = cache::export_archive(*store, *export_file);
    print_messages(*store);
    if (!status.ok()) *exit_code = fail(status.message());
  });
}

// `lexpack import`: an exported file added to the cache.
void add_import_command(CLI::App& app, int* exit_code) {
  auto* imp = app.add_subcommand("import", "Add the contents of an exported file to the cache");
  auto import_file = std::make_shared<std::string>();
  imp->add_option("FILE", *import_file, "Archive to read")->required();
  imp->callback([exit_code, import_file] {
    auto store = open_store(exit_code);
    if (!store) return;
    auto report = cache::import_archive(*store, *import_file);
    print_messages(*store);
    if (!report.ok()) {
      *exit_code = fail(report.message());
      return;
    }
    std::printf("imported %llu blobs, %llu actions, %llu files, %llu memo (%s)\n",
                static_cast<unsigned long long>(report->blobs),
                static_cast<unsigned long long>(report->actions),
                static_cast<unsigned long long>(report->files),
                static_cast<unsigned long long>(report->memos),
                report->signature_checked ? "signature checked"
                : report->signed_archive
                    ? "signed, not checked: no remote_secret is set"
                    : "not signed: its checksums prove it intact, not who made it");
  });
}

// `lexpack config`: the effective settings and where they come from.
void add_config_command(CLI::App& app) {
  auto* config =
      app.add_subcommand("config", "Show the effective settings and where they come from");
  config->callback([] {
    cache::Config c = cache::load_config("");
    for (const auto& e : c.entries) {
      std::printf("%-13s = %-24s (%s)\n", e.key.c_str(), e.value.c_str(), e.source.c_str());
    }
    for (const auto& w : c.warnings) std::fprintf(stderr, "lexpack: warning: %s\n", w.c_str());
  });
}

}  // namespace

void add_store_commands(CLI::App& app, int* exit_code) {
  add_stats_command(app, exit_code);
  add_gc_command(app, exit_code);
  add_verify_command(app, exit_code);
  add_clear_command(app, exit_code);
  add_export_command(app, exit_code);
  add_import_command(app, exit_code);
  add_config_command(app);
}

}  // namespace lexpack::cli
