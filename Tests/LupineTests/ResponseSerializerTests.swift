import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Lupine

// MARK: - Fixtures

private let serializerTestURL = URL(string: "https://example.com/resource")!

private func serializerRequest(_ method: HTTPMethod = .get) -> URLRequest {
    var request = URLRequest(url: serializerTestURL)
    request.httpMethod = method.rawValue
    return request
}

private func serializerResponse(status: Int = 200, headers: [String: String] = [:]) -> HTTPURLResponse {
    HTTPURLResponse(url: serializerTestURL, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
}

private struct SerializerPayload: Codable, Equatable, Sendable {
    let name: String
}

private struct EmptyablePayload: Decodable, EmptyResponse, Equatable {
    let count: Int
    static func emptyValue() -> EmptyablePayload { EmptyablePayload(count: 0) }
}

private struct SerializerMarkerError: Error, Equatable {
    let id: Int
}

private struct FailingPreprocessor: DataPreprocessor {
    func preprocess(_ data: Data) throws -> Data { throw SerializerMarkerError(id: 99) }
}

private struct ByteCountSerializer: ResponseSerializer {
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Int {
        if let error { throw error }
        return data?.count ?? 0
    }
}

/// The serialization reason inside `error`, when it is `AFError.responseSerializationFailed`.
private func serializationReason(_ error: any Error) -> AFError.ResponseSerializationFailureReason? {
    guard case let .responseSerializationFailed(reason) = error.asAFError else { return nil }
    return reason
}

private func isInputDataNilOrZeroLength(_ error: any Error) -> Bool {
    if case .inputDataNilOrZeroLength = serializationReason(error) { return true }
    return false
}

/// One case per empty-body situation that must be accepted: 204, 205 and HEAD.
private let allowedEmptyContexts: [(URLRequest, HTTPURLResponse)] = [
    (serializerRequest(.get), serializerResponse(status: 204)),
    (serializerRequest(.post), serializerResponse(status: 205)),
    (serializerRequest(.head), serializerResponse(status: 200)),
]

/// Empty-body situations that must be rejected.
private let disallowedEmptyContexts: [(URLRequest?, HTTPURLResponse?)] = [
    (serializerRequest(.get), serializerResponse(status: 200)),
    (serializerRequest(.post), serializerResponse(status: 201)),
    (nil, nil),
    (serializerRequest(.get), nil),
    (nil, serializerResponse(status: 404)),
]

// MARK: - Empty-response policy

@Suite("ResponseSerializer empty-response policy")
struct ResponseSerializerPolicyTests {
    @Test func defaultsAllowEmptyBodiesFor204And205AndHEAD() {
        #expect(DataResponseSerializer.defaultEmptyResponseCodes == [204, 205])
        #expect(DataResponseSerializer.defaultEmptyRequestMethods == [.head])
        #expect(DataResponseSerializer.defaultDataPreprocessor is PassthroughPreprocessor)
    }

    @Test func customConformerGetsDefaultPolicyAndPreprocessor() {
        let serializer = ByteCountSerializer()
        #expect(serializer.emptyResponseCodes == [204, 205])
        #expect(serializer.emptyRequestMethods == [.head])
        #expect(serializer.dataPreprocessor is PassthroughPreprocessor)
    }

    @Test func requestAllowanceIsNilWithoutRequestAndReadsHTTPMethodOtherwise() {
        let serializer = DataResponseSerializer()
        #expect(serializer.requestAllowsEmptyResponseData(nil) == nil)
        #expect(serializer.requestAllowsEmptyResponseData(serializerRequest(.head)) == true)
        #expect(serializer.requestAllowsEmptyResponseData(serializerRequest(.get)) == false)
    }

    @Test func requestAllowanceReadsAnyMethodTokenFromHTTPMethod() {
        var request = serializerRequest()
        request.httpMethod = "BREW"
        let serializer = DataResponseSerializer(emptyRequestMethods: [HTTPMethod(rawValue: "BREW")])
        #expect(serializer.requestAllowsEmptyResponseData(request) == true)
        #expect(serializer.requestAllowsEmptyResponseData(serializerRequest(.head)) == false)
    }

    @Test func responseAllowanceIsNilWithoutResponseAndReadsStatusOtherwise() {
        let serializer = DataResponseSerializer()
        #expect(serializer.responseAllowsEmptyResponseData(nil) == nil)
        #expect(serializer.responseAllowsEmptyResponseData(serializerResponse(status: 204)) == true)
        #expect(serializer.responseAllowsEmptyResponseData(serializerResponse(status: 200)) == false)
    }

    @Test func emptyResponseAllowedWhenEitherRequestOrResponseAllowsIt() {
        let serializer = DataResponseSerializer()
        #expect(serializer.emptyResponseAllowed(forRequest: serializerRequest(.head), response: serializerResponse(status: 200)))
        #expect(serializer.emptyResponseAllowed(forRequest: serializerRequest(.get), response: serializerResponse(status: 205)))
        #expect(serializer.emptyResponseAllowed(forRequest: nil, response: serializerResponse(status: 204)))
        #expect(!serializer.emptyResponseAllowed(forRequest: serializerRequest(.get), response: serializerResponse(status: 200)))
        #expect(!serializer.emptyResponseAllowed(forRequest: nil, response: nil))
    }

    @Test func customEmptyCodesAndMethodsReplaceTheDefaults() throws {
        let serializer = DataResponseSerializer(emptyResponseCodes: [200], emptyRequestMethods: [.options])
        #expect(try serializer.serialize(request: serializerRequest(.get), response: serializerResponse(status: 200),
                                         data: nil, error: nil) == Data())
        #expect(try serializer.serialize(request: serializerRequest(.options), response: serializerResponse(status: 201),
                                         data: nil, error: nil) == Data())
        #expect(throws: AFError.self) {
            try serializer.serialize(request: serializerRequest(.head), response: serializerResponse(status: 204),
                                     data: nil, error: nil)
        }
    }
}

// MARK: - Preprocessors

@Suite("DataPreprocessor")
struct DataPreprocessorTests {
    private func preprocessor<P: DataPreprocessor>(_ preprocessor: P) -> P { preprocessor }

    @Test func passthroughReturnsDataUnchanged() throws {
        let data = Data("abc".utf8)
        #expect(try PassthroughPreprocessor().preprocess(data) == data)
        #expect(try preprocessor(.passthrough).preprocess(data) == data)
    }

    @Test func googleXSSIStripsTheSixBytePrefix() throws {
        let data = Data(")]}',\n{\"name\":\"x\"}".utf8)
        #expect(try GoogleXSSIPreprocessor().preprocess(data) == Data("{\"name\":\"x\"}".utf8))
        #expect(try preprocessor(.googleXSSI).preprocess(data) == Data("{\"name\":\"x\"}".utf8))
    }

    @Test func googleXSSILeavesDataWithoutThePrefixUnchanged() throws {
        for text in ["{\"a\":1}", ")]}',{\"a\":1}", ")]}'", ""] {
            let data = Data(text.utf8)
            #expect(try GoogleXSSIPreprocessor().preprocess(data) == data)
        }
    }

    @Test func googleXSSIResultIsZeroIndexed() throws {
        let stripped = try GoogleXSSIPreprocessor().preprocess(Data(")]}',\nAB".utf8))
        #expect(stripped.startIndex == 0)
        #expect(stripped[0] == UInt8(ascii: "A"))
    }
}

// MARK: - DataResponseSerializer

@Suite("DataResponseSerializer")
struct DataResponseSerializerTests {
    @Test func returnsBodyUnchangedByDefault() throws {
        let data = Data("body".utf8)
        #expect(try DataResponseSerializer().serialize(request: serializerRequest(), response: serializerResponse(),
                                                       data: data, error: nil) == data)
    }

    @Test func appliesItsPreprocessor() throws {
        let serializer = DataResponseSerializer.data(dataPreprocessor: .googleXSSI)
        #expect(try serializer.serialize(request: nil, response: nil, data: Data(")]}',\nok".utf8),
                                         error: nil) == Data("ok".utf8))
    }

    @Test(arguments: [Data(), nil] as [Data?])
    func returnsEmptyDataFor204And205AndHEAD(data: Data?) throws {
        for (request, response) in allowedEmptyContexts {
            #expect(try DataResponseSerializer().serialize(request: request, response: response,
                                                           data: data, error: nil) == Data())
        }
    }

    @Test(arguments: [Data(), nil] as [Data?])
    func rejectsEmptyBodyOtherwiseWithInputDataNilOrZeroLength(data: Data?) {
        for (request, response) in disallowedEmptyContexts {
            let error = #expect(throws: AFError.self) {
                try DataResponseSerializer().serialize(request: request, response: response, data: data, error: nil)
            }
            #expect(error.map(isInputDataNilOrZeroLength) == true)
        }
    }

    @Test func rethrowsTheRequestErrorUnchanged() {
        let error = #expect(throws: SerializerMarkerError.self) {
            try DataResponseSerializer().serialize(request: serializerRequest(), response: serializerResponse(),
                                                   data: Data("x".utf8), error: SerializerMarkerError(id: 1))
        }
        #expect(error == SerializerMarkerError(id: 1))
    }

    @Test func rethrowsAnAFErrorUnchangedEvenForAllowedEmptyBody() {
        let error = #expect(throws: AFError.self) {
            try DataResponseSerializer().serialize(request: serializerRequest(), response: serializerResponse(status: 204),
                                                   data: nil, error: AFError.explicitlyCancelled)
        }
        #expect(error?.isExplicitlyCancelledError == true)
    }

    @Test func preprocessorErrorsPropagateUnwrapped() {
        #expect(throws: SerializerMarkerError(id: 99)) {
            try DataResponseSerializer(dataPreprocessor: FailingPreprocessor())
                .serialize(request: nil, response: nil, data: Data("x".utf8), error: nil)
        }
    }
}

// MARK: - StringResponseSerializer

@Suite("StringResponseSerializer")
struct StringResponseSerializerTests {
    @Test func usesTheExplicitEncodingOverTheResponseCharset() throws {
        let serializer = StringResponseSerializer(encoding: .utf8)
        let response = serializerResponse(headers: ["Content-Type": "text/plain; charset=iso-8859-1"])
        #expect(try serializer.serialize(request: nil, response: response, data: Data("café".utf8),
                                         error: nil) == "café")
    }

    @Test func usesISOLatin1FromTheResponseCharset() throws {
        let response = serializerResponse(headers: ["Content-Type": "text/plain; charset=ISO-8859-1"])
        #expect(try StringResponseSerializer().serialize(request: nil, response: response,
                                                         data: Data([0x63, 0x61, 0x66, 0xE9]), error: nil) == "café")
    }

    @Test func usesUTF8FromTheResponseCharset() throws {
        let response = serializerResponse(headers: ["Content-Type": "text/plain; charset=utf-8"])
        #expect(try StringResponseSerializer().serialize(request: nil, response: response,
                                                         data: Data("café".utf8), error: nil) == "café")
    }

    @Test func usesUTF16FromTheResponseCharset() throws {
        let response = serializerResponse(headers: ["Content-Type": "text/plain; charset=UTF-16LE"])
        let data = "hé".data(using: .utf16LittleEndian)!
        #expect(try StringResponseSerializer().serialize(request: nil, response: response,
                                                         data: data, error: nil) == "hé")
    }

    @Test(arguments: ["text/html; Charset=UTF-8", "text/html; CHARSET=utf-8", "text/html;format=x; charset=\"UTF-8\""])
    func readsTheCharsetParameterWhateverTheCaseOfItsName(contentType: String) throws {
        let response = serializerResponse(headers: ["Content-Type": contentType])
        #expect(try StringResponseSerializer().serialize(request: nil, response: response,
                                                         data: Data("naïve".utf8), error: nil) == "naïve")
    }

    @Test func fallsBackToISOLatin1WithoutCharset() throws {
        let response = serializerResponse(headers: ["Content-Type": "text/plain"])
        let utf8Bytes = Data("é".utf8)
        #expect(try StringResponseSerializer().serialize(request: nil, response: response,
                                                         data: utf8Bytes, error: nil) == "Ã©")
        #expect(try StringResponseSerializer().serialize(request: nil, response: nil,
                                                         data: utf8Bytes, error: nil) == "Ã©")
    }

    @Test func fallsBackToISOLatin1ForAnUnknownCharset() throws {
        let response = serializerResponse(headers: ["Content-Type": "text/plain; charset=x-made-up"])
        #expect(try StringResponseSerializer().serialize(request: nil, response: response,
                                                         data: Data([0xE9]), error: nil) == "é")
    }

    @Test func mapsEveryIANACharsetNameOfTheTableCaseInsensitively() {
        let table: [String: String.Encoding] = [
            "utf-8": .utf8, "ISO-8859-1": .isoLatin1, "unicode-1-1": .utf16, "iso-10646-ucs-2": .utf16,
            "UTF-16": .utf16, "utf-16be": .utf16BigEndian, "utf-16le": .utf16LittleEndian, "utf-32": .utf32,
            "utf-32BE": .utf32BigEndian, "utf-32le": .utf32LittleEndian,
        ]
        for (name, encoding) in table {
            #expect(String.Encoding(ianaCharsetName: name) == encoding, "\(name)")
        }
        #expect(String.Encoding(ianaCharsetName: "windows-1252") == nil)
    }

    @Test func undecodableBytesFailWithStringSerializationFailed() {
        let error = #expect(throws: AFError.self) {
            try StringResponseSerializer.string(encoding: .utf8)
                .serialize(request: nil, response: nil, data: Data([0xFF, 0xFE, 0xFD]), error: nil)
        }
        #expect(error?.failedStringEncoding == .utf8)
    }

    @Test func returnsEmptyStringFor204And205AndHEAD() throws {
        for (request, response) in allowedEmptyContexts {
            #expect(try StringResponseSerializer().serialize(request: request, response: response,
                                                             data: nil, error: nil) == "")
        }
    }

    @Test func rejectsEmptyBodyOtherwiseWithInputDataNilOrZeroLength() {
        for (request, response) in disallowedEmptyContexts {
            let error = #expect(throws: AFError.self) {
                try StringResponseSerializer().serialize(request: request, response: response, data: Data(),
                                                         error: nil)
            }
            #expect(error.map(isInputDataNilOrZeroLength) == true)
        }
    }

    @Test func rethrowsTheRequestErrorUnchanged() {
        #expect(throws: SerializerMarkerError(id: 2)) {
            try StringResponseSerializer().serialize(request: nil, response: nil, data: Data("x".utf8),
                                                     error: SerializerMarkerError(id: 2))
        }
    }

    @Test func appliesItsPreprocessor() throws {
        #expect(try StringResponseSerializer(dataPreprocessor: GoogleXSSIPreprocessor())
            .serialize(request: nil, response: nil, data: Data(")]}',\nhi".utf8), error: nil) == "hi")
    }
}

// MARK: - DecodableResponseSerializer

@Suite("DecodableResponseSerializer")
struct DecodableResponseSerializerTests {
    @Test func decodesJSONByDefault() throws {
        let value = try DecodableResponseSerializer<SerializerPayload>()
            .serialize(request: nil, response: nil, data: Data(#"{"name":"lupine"}"#.utf8), error: nil)
        #expect(value == SerializerPayload(name: "lupine"))
    }

    @Test func decodesWithAPropertyListDecoder() throws {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .xml
        let data = try encoder.encode(SerializerPayload(name: "plist"))
        let serializer = DecodableResponseSerializer<SerializerPayload>.decodable(of: SerializerPayload.self,
                                                                        decoder: PropertyListDecoder())
        #expect(try serializer.serialize(request: nil, response: nil, data: data, error: nil)
            == SerializerPayload(name: "plist"))
    }

    @Test func decodesAfterGoogleXSSIPreprocessing() throws {
        let serializer = DecodableResponseSerializer<SerializerPayload>(dataPreprocessor: .googleXSSI)
        let data = Data(")]}',\n{\"name\":\"g\"}".utf8)
        #expect(try serializer.serialize(request: nil, response: nil, data: data, error: nil) == SerializerPayload(name: "g"))
    }

    @Test func decoderErrorBecomesDecodingFailed() {
        let error = #expect(throws: AFError.self) {
            try DecodableResponseSerializer<SerializerPayload>()
                .serialize(request: nil, response: nil, data: Data("not json".utf8), error: nil)
        }
        guard case let .decodingFailed(underlying) = error.flatMap(serializationReason) else {
            Issue.record("expected .decodingFailed, got \(String(describing: error))")
            return
        }
        #expect(underlying is DecodingError)
        #expect(error?.underlyingError is DecodingError)
    }

    @Test func emptyBodyDecodesAsEmptyValueFor204And205AndHEAD() throws {
        for (request, response) in allowedEmptyContexts {
            #expect(try DecodableResponseSerializer<Empty>()
                .serialize(request: request, response: response, data: nil, error: nil) == Empty.value)
            #expect(try DecodableResponseSerializer<EmptyablePayload>()
                .serialize(request: request, response: response, data: Data(), error: nil)
                == EmptyablePayload(count: 0))
        }
    }

    @Test func allowedEmptyBodyForNonEmptyResponseTypeIsInvalidEmptyResponse() {
        let error = #expect(throws: AFError.self) {
            try DecodableResponseSerializer<SerializerPayload>()
                .serialize(request: serializerRequest(), response: serializerResponse(status: 204), data: nil, error: nil)
        }
        guard case let .invalidEmptyResponse(type) = error.flatMap(serializationReason) else {
            Issue.record("expected .invalidEmptyResponse, got \(String(describing: error))")
            return
        }
        #expect(type == "SerializerPayload")
    }

    @Test func disallowedEmptyBodyIsInputDataNilOrZeroLengthEvenForEmpty() {
        for (request, response) in disallowedEmptyContexts {
            let error = #expect(throws: AFError.self) {
                try DecodableResponseSerializer<Empty>().serialize(request: request, response: response,
                                                                    data: nil, error: nil)
            }
            #expect(error.map(isInputDataNilOrZeroLength) == true)
        }
    }

    @Test func emptyDecodesFromAnEmptyJSONObject() throws {
        #expect(try DecodableResponseSerializer<Empty>()
            .serialize(request: nil, response: nil, data: Data("{}".utf8), error: nil) == Empty.value)
        #expect(Empty.emptyValue() == Empty.value)
    }

    @Test func rethrowsTheRequestErrorUnchanged() {
        #expect(throws: SerializerMarkerError(id: 3)) {
            try DecodableResponseSerializer<SerializerPayload>()
                .serialize(request: nil, response: nil, data: Data("{}".utf8), error: SerializerMarkerError(id: 3))
        }
    }

    @Test func preprocessorErrorsAreNotWrappedAsDecodingFailed() {
        #expect(throws: SerializerMarkerError(id: 99)) {
            try DecodableResponseSerializer<SerializerPayload>(dataPreprocessor: FailingPreprocessor())
                .serialize(request: nil, response: nil, data: Data("{}".utf8), error: nil)
        }
    }
}
