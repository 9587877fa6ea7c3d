// A Store shared by worker threads: every call goes to the wrapped store
// under one mutex, since a Store is thread-compatible, not thread-safe.
// Used by the whole-build scan, which walks many TUs at once.
#pragma once

#include <mutex>
#include <string>

#include "cache/store.h"

namespace lexpack::cache {

class LockedStore : public cache::Store {
 public:
  explicit LockedStore(cache::Store* inner) : inner_(inner) {}
  const std::string& dir() const override { return inner_->dir(); }
  base::Result<cache::BlobId> put_blob(std::string_view bytes,
                                       const cache::BlobOptions& options) override {
    std::lock_guard lock(mu_);
    return inner_->put_blob(bytes, options);
  }
  std::optional<std::string_view> get_blob(const cache::BlobId& id) override {
    std::lock_guard lock(mu_);
    return inner_->get_blob(id);
  }
  bool has_blob(const cache::BlobId& id) override {
    std::lock_guard lock(mu_);
    return inner_->has_blob(id);
  }
  std::optional<cache::FileRecord> get_file(std::string_view path) override {
    std::lock_guard lock(mu_);
    return inner_->get_file(path);
  }
  base::Status put_file(std::string_view path, const cache::FileRecord& record) override {
    std::lock_guard lock(mu_);
    return inner_->put_file(path, record);
  }
  std::optional<cache::ActionRecord> get_action(const cache::ActionKey& key) override {
    std::lock_guard lock(mu_);
    return inner_->get_action(key);
  }
  base::Status put_action(const cache::ActionKey& key, const cache::ActionRecord& record) override {
    std::lock_guard lock(mu_);
    return inner_->put_action(key, record);
  }
  std::optional<std::string> get_memo(std::string_view table, std::string_view key) override {
    std::lock_guard lock(mu_);
    return inner_->get_memo(table, key);
  }
  // Copied under the lock into this thread's buffer, whose pages are reused
  // from one call to the next (a fresh copy of a large memo costs a page
  // fault per page), and fn runs outside the lock, so other threads are not
  // held up by what it does with the value.
  bool visit_memo(std::string_view table, std::string_view key,
                  const std::function<void(std::string_view)>& fn) override {
    thread_local std::string buffer;
    thread_local bool in_use = false;
    if (in_use) return cache::Store::visit_memo(table, key, fn);  // fn asked again
    bool found;
    {
      std::lock_guard lock(mu_);
      found = inner_->visit_memo(table, key, [](std::string_view v) { buffer.assign(v); });
    }
    if (!found) return false;
    in_use = true;
    struct Release {
      ~Release() { in_use = false; }
    } release;
    fn(buffer);
    return true;
  }
  base::Status put_memo(std::string_view table, std::string_view key,
                        std::string_view value) override {
    std::lock_guard lock(mu_);
    return inner_->put_memo(table, key, value);
  }
  base::Status add_counter(std::string_view name, int64_t delta) override {
    std::lock_guard lock(mu_);
    return inner_->add_counter(name, delta);
  }
  base::Status flush() override {
    std::lock_guard lock(mu_);
    return inner_->flush();
  }

 private:
  cache::Store* inner_;
  std::mutex mu_;
};

}  // namespace lexpack::cache
