// lexpack-https: the https leg of the remote tier. lexpack itself is a static
// program (it starts once per compile) and libcurl cannot be linked
// statically, so https requests go through this small dynamically linked
// program, started once per lexpack process that needs it and kept for the
// process's life (its connection stays open between requests).
//
// Protocol on stdin/stdout, one request at a time:
//   request: "GET <url>\n" | "HEAD <url>\n" | "PUT <url> <length>\n" <bytes>
//   reply:   "<status> <length>\n" <bytes>
// where status is the HTTP status (the bytes are the body), or -1 for an
// error and -2 for a timeout (the bytes say what happened).
// Arguments: --connect-timeout-ms N --timeout-ms N --max-bytes N
// [--first-byte-ms N] [--min-rate BYTES_PER_S] [--ca-file F] (a transfer with
// no byte within the connect time plus N ms, or slower than the rate after a
// 200 ms grace, is a timeout);
// credentials, if any, come in LEXPACK_HTTPS_USERPWD ("user:password").
#include <curl/curl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cache/remote/transfer_pace.h"

namespace {

using lexpack::cache::remote::Pace;

struct Options {
  long connect_timeout_ms = 100;
  long timeout_ms = 10000;
  unsigned long long max_bytes = 0;
  long first_byte_ms = 0;  // 0: only the timeouts above
  long long min_rate = 0;  // bytes per second; 0: no rate check
  std::string ca_file;
};

// A transfer judged by its progress (libcurl calls this as it goes).
struct Progress {
  Pace pace;
  std::string why;  // set when the transfer was stopped as too slow
};

int on_progress(void* user, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t ulnow) {
  Progress* p = static_cast<Progress*>(user);
  const uint64_t bytes = static_cast<uint64_t>(dlnow + ulnow);
  if (bytes > p->pace.bytes()) p->pace.add(bytes - p->pace.bytes());
  if (!p->pace.too_slow()) return 0;
  p->why = p->pace.why();
  return 1;
}

struct Body {
  std::string bytes;
  unsigned long long limit = 0;
  bool oversized = false;
};

size_t on_data(char* data, size_t size, size_t count, void* user) {
  Body* body = static_cast<Body*>(user);
  size_t n = size * count;
  if (body->bytes.size() + n > body->limit) {
    body->oversized = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  body->bytes.append(data, n);
  return n;
}

bool read_exact(std::string* out, size_t n) {
  out->resize(n);
  return n == 0 || std::fread(out->data(), 1, n, stdin) == n;
}

void reply(long status, const std::string& bytes) {
  std::printf("%ld %zu\n", status, bytes.size());
  std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i], value = argv[i + 1];
    if (key == "--connect-timeout-ms") {
      o.connect_timeout_ms = std::strtol(value.c_str(), nullptr, 10);
    } else if (key == "--timeout-ms") {
      o.timeout_ms = std::strtol(value.c_str(), nullptr, 10);
    } else if (key == "--max-bytes") {
      o.max_bytes = std::strtoull(value.c_str(), nullptr, 10);
    } else if (key == "--first-byte-ms") {
      o.first_byte_ms = std::strtol(value.c_str(), nullptr, 10);
    } else if (key == "--min-rate") {
      o.min_rate = std::strtoll(value.c_str(), nullptr, 10);
    } else if (key == "--ca-file") {
      o.ca_file = value;
    } else {
      std::fprintf(stderr, "lexpack-https: unknown argument %s\n", key.c_str());
      return 2;
    }
  }
  const char* userpwd = std::getenv("LEXPACK_HTTPS_USERPWD");
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) return 1;
  CURL* curl = curl_easy_init();
  if (!curl) return 1;
  char line[8192];
  while (std::fgets(line, sizeof line, stdin)) {
    char method[8] = {}, url[8000] = {};
    unsigned long long length = 0;
    int fields = std::sscanf(line, "%7s %7999s %llu", method, url, &length);
    std::string put_body;
    const std::string m = method;
    if (fields < 2 || (m != "GET" && m != "HEAD" && m != "PUT") || (m == "PUT" && fields != 3) ||
        (m == "PUT" && !read_exact(&put_body, length))) {
      reply(-1, "malformed request");
      return 1;
    }
    // Reset keeps the open connection, the TLS session and the DNS cache.
    curl_easy_reset(curl);
    Body body;
    body.limit = o.max_bytes;
    char error[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, o.connect_timeout_ms);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, o.timeout_ms);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
    // The first byte may come after the connection, then at the least rate.
    Progress progress{Pace(o.first_byte_ms, o.min_rate, false, o.connect_timeout_ms), {}};
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &progress);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    if (!o.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, o.ca_file.c_str());
    if (userpwd && *userpwd) curl_easy_setopt(curl, CURLOPT_USERPWD, userpwd);
    curl_slist* headers = nullptr;
    if (m == "HEAD") {
      curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (m == "PUT") {
      headers = curl_slist_append(headers, "Expect:");
      headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
      curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, put_body.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(put_body.size()));
    }
    CURLcode rc = curl_easy_perform(curl);
    if (headers) curl_slist_free_all(headers);
    if (rc == CURLE_OK) {
      long status = 0;
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
      reply(status, body.bytes);
    } else if (body.oversized) {
      reply(-1, "oversized reply");
    } else if (rc == CURLE_ABORTED_BY_CALLBACK && !progress.why.empty()) {
      reply(-2, progress.why);
    } else {
      reply(rc == CURLE_OPERATION_TIMEDOUT ? -2 : -1,
            std::string(curl_easy_strerror(rc)) + (*error ? std::string(": ") + error : ""));
    }
  }
  curl_easy_cleanup(curl);
  curl_global_cleanup();
  return 0;
}
