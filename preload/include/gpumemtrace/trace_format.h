// The trace format: the one contract between the recorder (preload/) and the analyzer
// (analyzer/). Header-only so both halves compile the same definitions; the prose
// description, byte by byte, is docs/trace-format.md. Any change in format/ that is not
// purely additive must bump kFormatVersion.
//
// The format is in parts under format/, one job each, so that a file includes only what it
// uses; this header includes them all, for code that needs the whole contract:
//
//   file_layout.h    where things lie in the file: prologue, ring, log frames; constants
//   checksum.h       CRC-32C of frames and the prologue
//   record_limits.h  what a record may hold at most (every reader enforces it)
//   event.h          the event (one recorded call), its enumerations and their names
//   records.h        the other records' tags and values (header, stack, trailer, ...)
//   byte_coding.h    varints, zigzag, strings: ByteWriter, ByteReader
//   event_codec.h    the event's delta coding in the log
//   record_codec.h   the other records' bytes, and the framing of a record
//   ring_slot.h      a ring slot, and how a record is split across slots and joined back
#pragma once

#include <gpumemtrace/format/aggregate.h>
#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/checksum.h>
#include <gpumemtrace/format/event.h>
#include <gpumemtrace/format/event_codec.h>
#include <gpumemtrace/format/file_layout.h>
#include <gpumemtrace/format/record_codec.h>
#include <gpumemtrace/format/record_limits.h>
#include <gpumemtrace/format/records.h>
#include <gpumemtrace/format/ring_slot.h>
