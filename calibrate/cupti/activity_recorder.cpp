// CUPTI buffers, record parsing (CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemcpyPtoP4,
// CUpti_ActivityExternalCorrelation) and the join of records with measurement ids.
#include "activity_recorder.hpp"

#include "cuda_check.hpp"

#include <cupti_activity.h>

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace partsim::calibrate::cuda {

namespace {

constexpr std::size_t kBufferBytes = 8 << 20;
constexpr std::size_t kAlignment = 8;
constexpr CUpti_ExternalCorrelationKind kCorrelationKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

struct Activity {
  std::uint32_t correlation = 0;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::string name;
  std::uint64_t bytes = 0;
  int device = -1;
};

/** What CUPTI's callbacks (called on CUPTI's own thread) hand over; CUPTI is process-wide, so is this. */
struct Store {
  std::mutex mutex;
  std::vector<Activity> activities;
  std::unordered_map<std::uint32_t, std::uint64_t> external; // correlation id -> measurement id
  std::size_t dropped = 0;
};

Store& store() {
  static Store s;
  return s;
}

const char* memcpy_kind(std::uint8_t kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    return "memcpy HtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    return "memcpy DtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    return "memcpy DtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
    return "memcpy PtoP";
  default:
    return "memcpy";
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  std::vector<Activity> activities;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> external;
  CUpti_Activity* record = nullptr;
  while (buffer != nullptr && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      activities.push_back({k->correlationId, k->start, k->end, k->name != nullptr ? k->name : "kernel", 0,
                            static_cast<int>(k->deviceId)});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      activities.push_back(
          {m->correlationId, m->start, m->end, memcpy_kind(m->copyKind), m->bytes, static_cast<int>(m->deviceId)});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      activities.push_back(
          {m->correlationId, m->start, m->end, memcpy_kind(m->copyKind), m->bytes, static_cast<int>(m->deviceId)});
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (e->externalKind == kCorrelationKind) external.emplace_back(e->correlationId, e->externalId);
      break;
    }
    default:
      break;
    }
  }
  size_t dropped = 0;
  if (buffer != nullptr) cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
  std::free(buffer);
  Store& s = store();
  const std::lock_guard lock(s.mutex);
  s.activities.insert(s.activities.end(), std::make_move_iterator(activities.begin()),
                      std::make_move_iterator(activities.end()));
  for (const auto& [correlation, id] : external) s.external[correlation] = id;
  s.dropped += dropped;
}

// RUNTIME and DRIVER too: external correlation records accompany API records ("a CUPTI activity API record created
// within an external API region"), so, as in Kineto, the API kinds are on although their records are not read.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

} // namespace

ActivityRecorder::ActivityRecorder() {
  CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  for (CUpti_ActivityKind kind : kKinds) CUPTI_CHECK(cuptiActivityEnable(kind));
}

ActivityRecorder::~ActivityRecorder() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
}

std::uint64_t ActivityRecorder::begin() {
  const std::uint64_t id = next_id_++;
  CUPTI_CHECK(cuptiActivityPushExternalCorrelationId(kCorrelationKind, id));
  return id;
}

void ActivityRecorder::end() {
  std::uint64_t id = 0;
  CUPTI_CHECK(cuptiActivityPopExternalCorrelationId(kCorrelationKind, &id));
}

std::map<std::uint64_t, ActivityInterval> ActivityRecorder::collect() {
  CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  Store& s = store();
  const std::lock_guard lock(s.mutex);
  if (s.dropped > 0) {
    const std::size_t dropped = s.dropped;
    s.dropped = 0;
    s.activities.clear();
    s.external.clear();
    fail("cuptiActivityGetNumDroppedRecords", std::to_string(dropped) + " records dropped", __FILE__, __LINE__);
  }
  std::map<std::uint64_t, ActivityInterval> intervals;
  for (const Activity& a : s.activities) {
    const auto id = s.external.find(a.correlation);
    if (id == s.external.end()) continue; // fills and other work outside any measurement
    ActivityInterval& i = intervals[id->second];
    i.start = std::min(i.start, a.start);
    i.end = std::max(i.end, a.end);
    if (i.names.find(a.name) == std::string::npos) i.names += (i.names.empty() ? "" : " + ") + a.name;
    i.bytes += a.bytes;
    if (i.device < 0) i.device = a.device;
    ++i.records;
  }
  s.activities.clear();
  s.external.clear();
  return intervals;
}

std::string cupti_version() {
  uint32_t version = 0;
  if (cuptiGetVersion(&version) != CUPTI_SUCCESS) return "";
  return std::to_string(version);
}

} // namespace partsim::calibrate::cuda
