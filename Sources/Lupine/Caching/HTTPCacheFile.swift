import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The disk form of one URL's stored responses: Lupine's own binary layout, checked on reading.
///
/// ```
/// "LUPC" version(1)  checksum(8, FNV-1a 64 of the rest)  payload:
///   key(string)  marker(string)  variantCount(1)
///   per variant: status(4)  requestTime(8)  responseTime(8)  policy(1)
///                fields(count(4), then name and value strings)  vary(count(4), then pairs)
///                body(length(8), bytes)
/// string = length(4) then UTF-8 bytes; numbers little-endian; times as Double bit patterns
/// ```
///
/// A file that is shorter than its lengths say, fails the checksum, names another key or does
/// not start with the magic decodes to nil: the store then removes it.
struct HTTPCacheFile {
    /// The URL the responses were stored for; a file is only ever used for that exact key.
    let key: String
    /// The name of the marker file in the URLCache's directory that vouches for the entry (see
    /// `HTTPCacheDiskStore`); empty when there is none.
    let marker: String
    let variants: [StoredResponse]

    private static let magic: [UInt8] = Array("LUPC".utf8)
    private static let version: UInt8 = 1
    /// Bytes before the payload: magic, version, checksum.
    private static let headerSize = 4 + 1 + 8

    func encoded() -> Data {
        var payload = [UInt8]()
        payload.reserveCapacity(variants.reduce(256) { $0 + $1.cost })
        Self.append(key, to: &payload)
        Self.append(marker, to: &payload)
        payload.append(UInt8(min(variants.count, Int(UInt8.max))))
        for variant in variants.prefix(Int(UInt8.max)) {
            let entry = variant.entry
            Self.append(UInt32(truncatingIfNeeded: entry.statusCode), to: &payload)
            Self.append(entry.requestTime.timeIntervalSince1970.bitPattern, to: &payload)
            Self.append(entry.responseTime.timeIntervalSince1970.bitPattern, to: &payload)
            payload.append(variant.storagePolicy == .allowed ? 0 : 1)
            Self.append(entry.headerFields, to: &payload)
            Self.append(entry.varyValues, to: &payload)
            Self.append(UInt64(variant.data.count), to: &payload)
            payload.append(contentsOf: variant.data)
        }
        var file = Self.magic
        file.append(Self.version)
        Self.append(Self.checksum(payload[...]), to: &file)
        file.append(contentsOf: payload)
        return Data(file)
    }

    /// The file `bytes` hold, when it is whole and was written for `key`.
    static func decode(_ bytes: Data, expectedKey: String) -> HTTPCacheFile? {
        let all = [UInt8](bytes)
        guard all.count >= headerSize, Array(all[0..<4]) == magic, all[4] == version else { return nil }
        var reader = Reader(bytes: all[5...])
        guard let checksum = reader.uint64(), checksum == Self.checksum(all[headerSize...]) else { return nil }
        guard let key = reader.string(), key == expectedKey,
              let marker = reader.string(),
              let count = reader.byte() else { return nil }
        var variants: [StoredResponse] = []
        for _ in 0..<count {
            guard let status = reader.uint32(),
                  let requestTime = reader.uint64(),
                  let responseTime = reader.uint64(),
                  let policy = reader.byte(),
                  let fields = reader.dictionary(),
                  let vary = reader.dictionary(),
                  let length = reader.uint64(),
                  let body = reader.bytes(length) else { return nil }
            let entry = HTTPCacheEntry(statusCode: Int(status), headerFields: fields,
                                       requestTime: Date(timeIntervalSince1970: Double(bitPattern: requestTime)),
                                       responseTime: Date(timeIntervalSince1970: Double(bitPattern: responseTime)),
                                       varyValues: vary)
            variants.append(StoredResponse(entry: entry, data: Data(body),
                                           storagePolicy: policy == 0 ? .allowed : .allowedInMemoryOnly))
        }
        guard reader.isAtEnd else { return nil }
        return HTTPCacheFile(key: key, marker: marker, variants: variants)
    }

    // MARK: Writing

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func append(_ string: String, to bytes: inout [UInt8]) {
        append(UInt32(truncatingIfNeeded: string.utf8.count), to: &bytes)
        bytes.append(contentsOf: string.utf8)
    }

    private static func append(_ pairs: [String: String], to bytes: inout [UInt8]) {
        append(UInt32(truncatingIfNeeded: pairs.count), to: &bytes)
        for (name, value) in pairs.sorted(by: { $0.key < $1.key }) {
            append(name, to: &bytes)
            append(value, to: &bytes)
        }
    }

    /// FNV-1a, 64 bits: enough to tell a damaged file from a whole one (not a defence against
    /// someone who can write the cache directory, who could write any response anyway).
    private static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    // MARK: Reading

    /// Reads values off the front of a byte slice; every read checks that the bytes are there.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        var isAtEnd: Bool { bytes.isEmpty }

        mutating func byte() -> UInt8? {
            bytes.popFirst()
        }

        mutating func uint32() -> UInt32? {
            guard let raw = take(4) else { return nil }
            return raw.reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func uint64() -> UInt64? {
            guard let raw = take(8) else { return nil }
            return raw.reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }

        mutating func bytes(_ count: UInt64) -> ArraySlice<UInt8>? {
            guard count <= UInt64(bytes.count) else { return nil }
            return take(Int(count))
        }

        mutating func string() -> String? {
            guard let length = uint32(), let raw = bytes(UInt64(length)) else { return nil }
            return String(validating: raw, as: UTF8.self)
        }

        mutating func dictionary() -> [String: String]? {
            guard let count = uint32(), UInt64(count) * 8 <= UInt64(bytes.count) else { return nil }
            var result: [String: String] = [:]
            for _ in 0..<count {
                guard let name = string(), let value = string() else { return nil }
                result[name] = value
            }
            return result
        }

        private mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count <= bytes.count else { return nil }
            let taken = bytes.prefix(count)
            bytes = bytes.dropFirst(count)
            return taken
        }
    }
}
