import Foundation

extension URLEncodedFormEncoder {
    /// How the key of an array element is written.
    public enum ArrayEncoding {
        /// `key[]` for every element.
        case brackets
        /// `key` for every element.
        case noBrackets
        /// `key[<index>]`.
        case indexInBrackets
        /// The key the closure returns for the array's key and the element's index.
        case custom((_ key: String, _ index: Int) -> String)

        func encode(_ key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: "\(key)[]"
            case .noBrackets: key
            case .indexInBrackets: "\(key)[\(index)]"
            case let .custom(encoding): encoding(key, index)
            }
        }
    }

    /// How a `Bool` is written.
    public enum BoolEncoding {
        /// `1` and `0`.
        case numeric
        /// `true` and `false`.
        case literal

        func encode(_ value: Bool) -> String {
            switch self {
            case .numeric: value ? "1" : "0"
            case .literal: value ? "true" : "false"
            }
        }
    }

    /// How `Data` is written.
    public enum DataEncoding {
        /// `Data`'s own `Encodable` conformance: an array of bytes.
        case deferredToData
        /// A Base64 string.
        case base64
        /// The string the closure returns; its error fails the encoding.
        case custom((Data) throws -> String)

        /// The string for `data`, or nil when `Data`'s own conformance should run.
        func encode(_ data: Data) throws -> String? {
            switch self {
            case .deferredToData: nil
            case .base64: data.base64EncodedString()
            case let .custom(encoding): try encoding(data)
            }
        }
    }

    /// How a `Date` is written.
    public enum DateEncoding {
        /// `Date`'s own `Encodable` conformance: seconds since 2001-01-01.
        case deferredToDate
        /// `String(date.timeIntervalSince1970)`.
        case secondsSince1970
        /// `String(date.timeIntervalSince1970 * 1000.0)`.
        case millisecondsSince1970
        /// ISO 8601 internet date-time in UTC, for example `2023-11-14T22:13:20Z`.
        case iso8601
        /// The string of the given formatter.
        case formatted(DateFormatter)
        /// The string the closure returns; its error fails the encoding.
        case custom((Date) throws -> String)

        /// The string for `date`, or nil when `Date`'s own conformance should run.
        func encode(_ date: Date) throws -> String? {
            switch self {
            case .deferredToDate: nil
            case .secondsSince1970: String(date.timeIntervalSince1970)
            case .millisecondsSince1970: String(date.timeIntervalSince1970 * 1000.0)
            // Same output as ISO8601DateFormatter with .withInternetDateTime, without sharing a formatter.
            case .iso8601: date.formatted(Date.ISO8601FormatStyle())
            case let .formatted(formatter): formatter.string(from: date)
            case let .custom(encoding): try encoding(date)
            }
        }
    }

    /// How the full key of each value (the parent key paths included) is transformed.
    public enum KeyEncoding {
        /// The key unchanged.
        case useDefaultKeys
        /// `camelCase` → `camel_case`; a run of capitals is one word (`myURLKey` → `my_url_key`).
        case convertToSnakeCase
        /// `camelCase` → `camel-case`, with the same word rules as ``convertToSnakeCase``.
        case convertToKebabCase
        /// The first character uppercased.
        case capitalized
        /// Every character uppercased.
        case uppercased
        /// Every character lowercased.
        case lowercased
        /// The key the closure returns.
        case custom((String) -> String)

        func encode(_ key: String) -> String {
            switch self {
            case .useDefaultKeys: key
            case .convertToSnakeCase: Self.joiningWords(of: key, separator: "_")
            case .convertToKebabCase: Self.joiningWords(of: key, separator: "-")
            case .capitalized: key.prefix(1).uppercased() + key.dropFirst()
            case .uppercased: key.uppercased()
            case .lowercased: key.lowercased()
            case let .custom(encoding): encoding(key)
            }
        }

        /// Splits a camel-case key into lowercased words joined by `separator`.
        ///
        /// The first character never starts a new word. Otherwise a word starts at each capital that
        /// follows a non-capital; in a run of capitals followed by a lowercase letter, the last capital
        /// starts the next word (`myURLKey` → `my`, `url`, `key`). Letters are classified with
        /// `CharacterSet.uppercaseLetters`/`lowercaseLetters`; digits and symbols stay in the current
        /// word. These are the rules of Alamofire (and Foundation's original `convertToSnakeCase`).
        static func joiningWords(of key: String, separator: String) -> String {
            let scalars = Array(key.unicodeScalars)
            guard scalars.count > 1 else { return key.lowercased() }

            func firstIndex(from start: Int, in set: CharacterSet) -> Int? {
                guard start < scalars.count else { return nil }
                return scalars[start...].firstIndex { set.contains($0) }
            }

            var words: [Range<Int>] = []
            var wordStart = 0
            var searchStart = 1
            while let capital = firstIndex(from: searchStart, in: .uppercaseLetters) {
                words.append(wordStart..<capital)
                guard let lowercase = firstIndex(from: capital, in: .lowercaseLetters) else {
                    // Only capitals (or non-letters) remain: they form the last word.
                    wordStart = capital
                    break
                }
                if lowercase == capital + 1 {
                    wordStart = capital
                } else {
                    // A run of capitals is a word of its own, up to the capital before the lowercase.
                    words.append(capital..<(lowercase - 1))
                    wordStart = lowercase - 1
                }
                searchStart = lowercase + 1
            }
            words.append(wordStart..<scalars.count)

            return words.map { range in
                var view = String.UnicodeScalarView()
                view.append(contentsOf: scalars[range])
                return String(view).lowercased()
            }.joined(separator: separator)
        }
    }

    /// How the key of a nested object's value is appended to its parent's key.
    public struct KeyPathEncoding: Sendable {
        /// `parent[key]`.
        public static let brackets = KeyPathEncoding { "[\($0)]" }
        /// `parent.key`.
        public static let dots = KeyPathEncoding { ".\($0)" }

        private let encoding: @Sendable (_ subkey: String) -> String

        /// Creates a key-path encoding from a closure that formats one sub-key.
        ///
        /// - Parameter encoding: Returns the text appended to the parent key for `subkey`.
        public init(encoding: @escaping @Sendable (_ subkey: String) -> String) {
            self.encoding = encoding
        }

        func encodeKeyPath(_ subkey: String) -> String {
            encoding(subkey)
        }
    }

    /// How a `nil` value is written.
    public struct NilEncoding: Sendable {
        /// The key is left out.
        public static let dropKey = NilEncoding { nil }
        /// The key with an empty value: `key=`.
        public static let dropValue = NilEncoding { "" }
        /// `key=null`.
        public static let null = NilEncoding { "null" }

        private let encoding: @Sendable () -> String?

        /// Creates a nil encoding from a closure giving the value to write.
        ///
        /// - Parameter encoding: Returns the value written for `nil`, or nil to leave the key out.
        public init(encoding: @escaping @Sendable () -> String?) {
            self.encoding = encoding
        }

        func encodeNil() -> String? {
            encoding()
        }
    }

    /// How spaces are written; applied after percent-escaping, which leaves spaces for this step.
    public enum SpaceEncoding {
        /// `%20`.
        case percentEscaped
        /// `+`.
        case plusReplaced

        func encode(_ string: String) -> String {
            // Most keys and values hold no space: they are returned as they are. The others are
            // rebuilt in Swift; `replacingOccurrences` bridges through NSString on Linux.
            guard string.utf8.contains(UInt8(ascii: " ")) else { return string }
            let replacement = switch self {
            case .percentEscaped: "%20"
            case .plusReplaced: "+"
            }
            return string.split(separator: " ", omittingEmptySubsequences: false).joined(separator: replacement)
        }
    }
}
