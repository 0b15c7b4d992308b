import ArgumentParser
import Foundation
import Lupine

/// Builds the URLRequest a request command sends from its URL, items and options.
struct RequestBuilder {
    let method: HTTPMethod
    let options: RequestOptions

    /// Why a request cannot be built, with the exit status it ends with.
    struct Failure: Error {
        let status: Int32
        let message: String
    }

    /// The User-Agent sent unless a header item gives another.
    static let userAgent = "lupine/\(AFInfo.version)"

    /// The methods whose `key=value` fields go into the query string.
    private var fieldsGoToQuery: Bool { [.get, .head, .delete].contains(method) }

    /// The request, ready for Lupine.
    /// - Throws: `Failure` for a URL that does not parse, items that cannot be combined, or a body
    ///   file that cannot be read.
    func urlRequest(standardInputIsTerminal: Bool = Terminal.isTerminal(STDIN_FILENO)) throws -> URLRequest {
        let items = try options.parsedItems()
        let typed = URLInput.completed(options.url)
        guard var components = URLComponents(string: typed), components.host?.isEmpty == false else {
            throw Failure(status: ExitStatus.malformedURL, message: "'\(options.url)' is not a URL.")
        }
        var queryPairs: [(String, String)] = items.compactMap {
            if case let .query(name, value) = $0 { return (name, value) }
            return nil
        }
        let fields = items.compactMap { item -> BodyField? in
            switch item {
            case let .field(name, value): .string(name: name, value: value)
            case let .jsonField(name, json): .json(name: name, json: json)
            default: nil
            }
        }
        let bodyFiles = items.compactMap { item -> String? in
            if case let .bodyFile(path) = item { return path }
            return nil
        }
        var headers = HTTPHeaders()
        headers.add(.userAgent(Self.userAgent))

        var body: RequestBody = .none
        if fieldsGoToQuery {
            if fields.contains(where: \.isTyped) {
                throw Failure(status: ExitStatus.failed,
                              message: "Typed JSON fields (key:=json) need a body: use post, put or patch.")
            }
            queryPairs += fields.compactMap {
                if case let .string(name, value) = $0 { return (name, value) }
                return nil
            }
        } else if !fields.isEmpty {
            body = options.json || fields.contains(where: \.isTyped) ? .json(fields) : .form(fields)
        }
        if let path = bodyFiles.first {
            guard bodyFiles.count == 1, case .none = body else {
                throw Failure(status: ExitStatus.failed, message: "A body from @file or @- cannot be mixed with other body fields.")
            }
            body = .file(path)
        } else if case .none = body, !fieldsGoToQuery, !options.ignoreStdin, !standardInputIsTerminal,
                  Terminal.isReadablePipeOrFile(STDIN_FILENO) {
            body = .file("-")
        }
        if options.json, headers["Accept"] == nil {
            headers.add(.accept("application/json"))
        }

        if !queryPairs.isEmpty {
            let escaped = queryPairs.map { URLEncoding.default.escape($0.0) + "=" + URLEncoding.default.escape($0.1) }
            components.percentEncodedQuery = ((components.percentEncodedQuery.map { [$0] } ?? []) + escaped)
                .filter { !$0.isEmpty }
                .joined(separator: "&")
        }
        guard let url = components.url else {
            throw Failure(status: ExitStatus.malformedURL, message: "'\(options.url)' is not a URL.")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method.rawValue
        try body.apply(to: &request, headers: &headers, json: options.json)
        if let (user, password) = options.connection.credentials {
            headers.add(.authorization(username: user, password: password))
        }
        // Header items and -H come last: they replace what the tool would send.
        for item in items {
            if case let .header(name, value) = item { headers.update(name: name, value: value) }
        }
        for header in options.headers { headers.update(header.header) }
        request.headers = headers
        return request
    }
}

/// A field of a form or JSON body.
enum BodyField: Sendable {
    case string(name: String, value: String)
    /// Typed JSON, as typed (checked to parse).
    case json(name: String, json: String)

    var isTyped: Bool {
        if case .json = self { return true }
        return false
    }
}

/// The body of the request and how it is encoded.
enum RequestBody {
    case none
    case form([BodyField])
    case json([BodyField])
    /// A file, or "-" for standard input: streamed, never read whole into memory.
    case file(String)

    func apply(to request: inout URLRequest, headers: inout HTTPHeaders, json: Bool) throws {
        switch self {
        case .none:
            return
        case let .form(fields):
            let pairs = fields.map { field -> String in
                guard case let .string(name, value) = field else { return "" }
                return URLEncoding.default.escape(name) + "=" + URLEncoding.default.escape(value)
            }
            request.httpBody = Data(pairs.joined(separator: "&").utf8)
            headers.update(.contentType("application/x-www-form-urlencoded; charset=utf-8"))
        case let .json(fields):
            request.httpBody = Data(Self.jsonObject(fields).utf8)
            headers.update(.contentType("application/json"))
            if headers["Accept"] == nil { headers.add(.accept("application/json, */*;q=0.5")) }
        case let .file(path):
            try applyFile(path, to: &request, headers: &headers)
            if json { headers.update(.contentType("application/json")) }
        }
    }

    private func applyFile(_ path: String, to request: inout URLRequest, headers: inout HTTPHeaders) throws {
        if path == "-" {
            guard let stream = InputStream(fileAtPath: "/dev/stdin") else {
                throw RequestBuilder.Failure(status: ExitStatus.readError, message: "Cannot read standard input.")
            }
            request.httpBodyStream = stream
            return
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
              FileManager.default.isReadableFile(atPath: path),
              let stream = InputStream(fileAtPath: path)
        else {
            throw RequestBuilder.Failure(status: ExitStatus.readError, message: "Cannot read the body file '\(path)'.")
        }
        // A small file is sent with its length (some servers refuse chunked uploads) and can be
        // sent again by a retry; a large one streams in chunks, never whole in memory.
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value
        if let size, size <= Self.largestBodyHeldInMemory, let data = FileManager.default.contents(atPath: path) {
            request.httpBody = data
        } else {
            request.httpBodyStream = stream
        }
    }

    /// Body files up to this size are read into memory.
    static let largestBodyHeldInMemory: Int64 = 16 << 20

    /// `{"name": value, ...}` with the fields in the order given (a JSON object's order is the
    /// writer's choice, and the order typed is the one a reader expects).
    static func jsonObject(_ fields: [BodyField]) -> String {
        let members = fields.map { field -> String in
            switch field {
            case let .string(name, value): "\(jsonString(name)): \(jsonString(value))"
            case let .json(name, json): "\(jsonString(name)): \(json)"
            }
        }
        return "{" + members.joined(separator: ", ") + "}"
    }

    /// `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
