// HttpExporter: serves a Registry at GET /metrics in the Prometheus text
// format over HTTP, on an embedded civetweb server. Kept apart from
// //metrics:registry so that the metrics core has no HTTP dependency.
//
//   BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<HttpExporter> exporter,
//                             HttpExporter::Start(registry, {.port = 9249}));
//   int port = exporter->port();   // scrape http://127.0.0.1:<port>/metrics
//
// The server runs on its own threads until the exporter is destroyed. Each
// scrape renders Registry::ExportText() once; other paths answer 404 and
// methods other than GET / HEAD answer 405.
#ifndef METRICS_HTTP_EXPORTER_H_
#define METRICS_HTTP_EXPORTER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "metrics/registry.h"

struct mg_context;
struct mg_connection;

namespace backfill {

class HttpExporter {
 public:
  struct Options {
    // TCP port; 0 lets the OS choose a free one (read it back with port()).
    // Range 0..65535. Default 0.
    int port = 0;
    // Address to listen on: an IPv4 literal or an IPv6 literal without
    // brackets ("::1"). Default "127.0.0.1" (local scrapers only); use
    // "0.0.0.0" to accept remote scrapers.
    std::string bind_address = "127.0.0.1";
    // Server worker threads, i.e. requests served at once (more requests
    // queue). Range >= 1. Default 1, and keep it there: Debian's civetweb
    // 1.15 is built without REENTRANT_TIME and formats every response's
    // Date header with gmtime(), whose static buffer two workers would race
    // on (ThreadSanitizer reports it). One scrape at a time is plenty for
    // Prometheus.
    int num_threads = 1;
  };

  // Starts serving `registry`, which must outlive the exporter.
  // Errors: InvalidArgument for an out-of-range port or num_threads, or a
  // bind address with characters civetweb would misparse; Unavailable if
  // the server cannot start (address in use, address not local, ...), with
  // civetweb's message.
  static absl::StatusOr<std::unique_ptr<HttpExporter>> Start(
      Registry& registry, const Options& options);

  HttpExporter(const HttpExporter&) = delete;
  HttpExporter& operator=(const HttpExporter&) = delete;
  // Stops the server: waits for in-flight scrapes and joins its threads.
  ~HttpExporter();

  // The bound TCP port (the OS's choice when Options::port was 0).
  int port() const { return port_; }

 private:
  explicit HttpExporter(Registry& registry) : registry_(registry) {}
  static int HandleMetrics(mg_connection* connection, void* exporter);

  Registry& registry_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

}  // namespace backfill

#endif  // METRICS_HTTP_EXPORTER_H_
