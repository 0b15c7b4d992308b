import Foundation

/// Parses the dates found in HTTP header fields (`Date`, `Expires`, `Last-Modified`) and in the
/// `Expires` attribute of cookies.
///
/// One lenient algorithm (RFC 6265, section 5.1.1) covers the IMF-fixdate of RFC 9110
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and
/// asctime (`Sun Nov  6 08:49:37 1994`) forms, and the variants servers send in cookies. It needs
/// no DateFormatter, so it is safe from any thread.
enum HTTPDate {
    /// The date `text` names, or nil when it names none (RFC 9111 treats such an `Expires` as
    /// already past; callers decide).
    static func parse(_ text: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in tokens(of: text) {
            if time == nil, let parsed = parseTime(token) {
                time = parsed
            } else if day == nil, let value = leadingNumber(token, digits: 1...2) {
                day = value
            } else if month == nil, let value = parseMonth(token) {
                month = value
            } else if year == nil, let value = leadingNumber(token, digits: 2...4) {
                year = value
            }
        }
        guard let time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59 else {
            return nil
        }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte)
            || (0x5B...0x60).contains(byte) || (0x7B...0x7E).contains(byte)
    }

    private static func tokens(of text: String) -> [ArraySlice<UInt8>] {
        Array(text.utf8).split(whereSeparator: isDelimiter)
    }

    /// `1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT`, anything after it ignored.
    private static func parseTime(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        var parts: [Int] = []
        var current = 0
        var digits = 0
        for byte in token {
            if (0x30...0x39).contains(byte), digits < 2 {
                current = current * 10 + Int(byte - 0x30)
                digits += 1
            } else if byte == 0x3A, digits > 0, parts.count < 2 {
                parts.append(current)
                current = 0
                digits = 0
            } else {
                break
            }
        }
        guard parts.count == 2, digits > 0 else { return nil }
        return (parts[0], parts[1], current)
    }

    /// A number of `digits` digits at the start of `token`, followed by a non-digit or nothing.
    private static func leadingNumber(_ token: ArraySlice<UInt8>, digits: ClosedRange<Int>) -> Int? {
        let leading = token.prefix { (0x30...0x39).contains($0) }
        guard digits.contains(leading.count) else { return nil }
        return leading.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func parseMonth(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
