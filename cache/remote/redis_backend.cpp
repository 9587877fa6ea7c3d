// Redis through hiredis: GET/SET/EXISTS/MGET on "lexpack:<key>", one
// connection per backend, opened on first use with the connect timeout and
// read/written with the first-byte timeout per read.
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cerrno>

#include "cache/remote/backend.h"

namespace lexpack::cache::remote {

std::unique_ptr<Backend> make_http_backend(const RemoteSpec& spec);

namespace {

timeval to_timeval(int ms) {
  timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

class RedisBackend final : public Backend {
 public:
  explicit RedisBackend(const RemoteSpec& spec) : spec_(spec) {}
  ~RedisBackend() override {
    if (ctx_) redisFree(ctx_);
  }

  Reply get(std::string_view key) override { return command({"GET", name(key)}); }
  Reply put(std::string_view key, std::string_view value) override {
    return command({"SET", name(key), std::string(value)});
  }
  Reply exists(std::string_view key) override {
    Reply r = command({"EXISTS", name(key)});
    return r;
  }
  std::vector<Reply> get_many(std::span<const std::string> keys) override {
    std::vector<std::string> args = {"MGET"};
    for (const std::string& k : keys) args.push_back(name(k));
    std::vector<Reply> out(keys.size());
    redisReply* reply = run(args, &out[0]);
    if (!reply) {
      for (Reply& r : out) r = out[0];
      return out;
    }
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != keys.size()) {
      for (Reply& r : out) r = {Outcome::kError, {}, "unexpected MGET reply"};
    } else {
      for (size_t i = 0; i < keys.size(); ++i) out[i] = convert(reply->element[i]);
    }
    freeReplyObject(reply);
    return out;
  }

 private:
  static std::string name(std::string_view key) { return "lexpack:" + std::string(key); }

  Reply failure(const std::string& what) {
    bool timeout = ctx_ && ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    Reply r{timeout ? Outcome::kTimeout : Outcome::kError, {}, what};
    if (ctx_) {
      r.error += std::string(": ") + ctx_->errstr;
      redisFree(ctx_);  // a broken connection is not reused
      ctx_ = nullptr;
    }
    return r;
  }

  bool connect(Reply* error) {
    if (ctx_) return true;
    ctx_ = redisConnectWithTimeout(spec_.host.c_str(), spec_.port,
                                   to_timeval(spec_.connect_timeout_ms));
    if (!ctx_ || ctx_->err) {
      bool timeout =
          ctx_ && ctx_->err == REDIS_ERR_IO && (errno == EINPROGRESS || errno == ETIMEDOUT);
      *error = {timeout ? Outcome::kTimeout : Outcome::kError,
                {},
                std::string("connect: ") + (ctx_ ? ctx_->errstr : "out of memory")};
      if (ctx_) redisFree(ctx_);
      ctx_ = nullptr;
      return false;
    }
    // hiredis bounds each read, not a whole reply: a server that sends no
    // byte within the first-byte timeout is sick; one that keeps sending is not.
    redisSetTimeout(ctx_,
                    to_timeval(std::min(spec_.operation_timeout_ms, spec_.first_byte_timeout_ms)));
    if (!spec_.password.empty()) {
      std::vector<std::string> auth = {"AUTH"};
      if (!spec_.user.empty()) auth.push_back(spec_.user);
      auth.push_back(spec_.password);
      if (!simple(auth, error, "AUTH")) return false;
    }
    if (spec_.db != 0 && !simple({"SELECT", std::to_string(spec_.db)}, error, "SELECT")) {
      return false;
    }
    return true;
  }

  bool simple(const std::vector<std::string>& args, Reply* error, const char* what) {
    redisReply* reply = raw(args);
    if (!reply) {
      *error = failure(what);
      return false;
    }
    bool ok = reply->type != REDIS_REPLY_ERROR;
    if (!ok) *error = {Outcome::kError, {}, std::string(what) + " refused"};
    freeReplyObject(reply);
    if (!ok) {
      redisFree(ctx_);
      ctx_ = nullptr;
    }
    return ok;
  }

  redisReply* raw(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    return static_cast<redisReply*>(
        redisCommandArgv(ctx_, int(args.size()), argv.data(), lens.data()));
  }

  redisReply* run(const std::vector<std::string>& args, Reply* error) {
    if (!connect(error)) return nullptr;
    redisReply* reply = raw(args);
    if (!reply) *error = failure(args[0]);
    return reply;
  }

  static Reply convert(const redisReply* reply) {
    switch (reply->type) {
      case REDIS_REPLY_STRING:
        return {Outcome::kHit, std::string(reply->str, reply->len), {}};
      case REDIS_REPLY_NIL:
        return {Outcome::kMiss, {}, {}};
      case REDIS_REPLY_STATUS:
        return {Outcome::kStored, {}, {}};
      case REDIS_REPLY_INTEGER:
        return {reply->integer > 0 ? Outcome::kHit : Outcome::kMiss, {}, {}};
      case REDIS_REPLY_ERROR:
        return {Outcome::kError, {}, std::string("server: ") + std::string(reply->str, reply->len)};
      default:
        return {Outcome::kError, {}, "unexpected reply"};
    }
  }

  Reply command(const std::vector<std::string>& args) {
    Reply error;
    redisReply* reply = run(args, &error);
    if (!reply) return error;
    Reply r = convert(reply);
    freeReplyObject(reply);
    return r;
  }

  RemoteSpec spec_;
  redisContext* ctx_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_backend(const RemoteSpec& spec) {
  if (spec.scheme == Scheme::kRedis) return std::make_unique<RedisBackend>(spec);
  return make_http_backend(spec);
}

}  // namespace lexpack::cache::remote
