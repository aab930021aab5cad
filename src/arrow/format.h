// Numbers of the Arrow IPC format's flatbuffer schemas (format/Schema.fbs, format/Message.fbs):
// the field ids of the tables the reader and the writer use, and the values of their enums and
// unions. A field id is the field's position in its table's declaration; a union field takes two
// ids (its type tag, then its value).
#pragma once

#include <cstdint>

namespace tzrec::arrow::format {

// enum MetadataVersion : short
constexpr int16_t kV1 = 0, kV4 = 3, kV5 = 4;

// union MessageHeader
constexpr uint8_t kHeaderSchema = 1, kHeaderDictionaryBatch = 2, kHeaderRecordBatch = 3,
                  kHeaderTensor = 4, kHeaderSparseTensor = 5;

// The 4 bytes before the metadata length of a message (since Arrow 0.15).
constexpr uint32_t kContinuation = 0xFFFFFFFFu;

// table Message { version, header (union), bodyLength, custom_metadata }
namespace message {
constexpr int kVersion = 0, kHeaderType = 1, kHeader = 2, kBodyLength = 3;
}
// table RecordBatch { length, nodes: [FieldNode], buffers: [Buffer], compression,
// variadicBufferCounts } (struct FieldNode { length: long; null_count: long }, struct Buffer {
// offset: long; length: long })
namespace record_batch {
constexpr int kLength = 0, kNodes = 1, kBuffers = 2, kCompression = 3, kVariadicCounts = 4;
}
// table BodyCompression { codec: CompressionType (byte), method: BodyCompressionMethod (byte) }
namespace body_compression {
constexpr int kCodec = 0, kMethod = 1;
}
// table Schema { endianness, fields, custom_metadata, features }
namespace schema {
constexpr int kEndianness = 0, kFields = 1;
}
// table Field { name, nullable, type (union), dictionary, children, custom_metadata }
namespace field {
constexpr int kName = 0, kNullable = 1, kTypeType = 2, kType = 3, kDictionary = 4, kChildren = 5;
}

// union Type (0 is NONE)
enum Type : uint8_t {
  kNull = 1,
  kInt = 2,
  kFloatingPoint = 3,
  kBinary = 4,
  kUtf8 = 5,
  kBool = 6,
  kDecimal = 7,
  kDate = 8,
  kTime = 9,
  kTimestamp = 10,
  kInterval = 11,
  kList = 12,
  kStruct = 13,
  kUnion = 14,
  kFixedSizeBinary = 15,
  kFixedSizeList = 16,
  kMap = 17,
  kDuration = 18,
  kLargeBinary = 19,
  kLargeUtf8 = 20,
  kLargeList = 21,
  kRunEndEncoded = 22,
  kBinaryView = 23,
  kUtf8View = 24,
  kListView = 25,
  kLargeListView = 26,
};

}  // namespace tzrec::arrow::format
