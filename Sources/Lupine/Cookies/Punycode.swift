/// The Punycode encoding of RFC 3492, as IDNA uses it for the labels of a host name: a label with
/// characters outside ASCII is written `xn--` followed by its Punycode form.
///
/// The Public Suffix List writes internationalized rules in Unicode ("公司.cn"), while hosts reach
/// the cookie jar as URLs carry them, in ASCII ("xn--55qx5d.cn"); rules are brought to the
/// hosts' form before they are compared.
enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 0x80

    /// `label` as IDNA writes it in a host name: unchanged when it is ASCII, else `xn--` and its
    /// Punycode form. Nil when it cannot be encoded (a label too long to count).
    static func asciiLabel(_ label: Substring) -> String? {
        if label.utf8.allSatisfy({ $0 < 0x80 }) { return String(label) }
        return encode(label.unicodeScalars.map(\.value)).map { "xn--" + $0 }
    }

    /// The Punycode form of `codePoints` (RFC 3492, section 6.3), without the `xn--` prefix.
    static func encode(_ codePoints: [UInt32]) -> String? {
        var output: [UInt8] = codePoints.filter { $0 < 0x80 }.map { UInt8($0) }
        let basicCount = output.count
        if basicCount > 0 { output.append(UInt8(ascii: "-")) }
        var n = initialN
        var delta = 0
        var bias = initialBias
        var handled = basicCount
        while handled < codePoints.count {
            // The smallest code point not handled yet.
            guard let next = codePoints.lazy.map({ Int($0) }).filter({ $0 >= n }).min() else { return nil }
            let (step, stepOverflow) = (next - n).multipliedReportingOverflow(by: handled + 1)
            let (sum, sumOverflow) = delta.addingReportingOverflow(step)
            guard !stepOverflow, !sumOverflow else { return nil }
            delta = sum
            n = next
            for codePoint in codePoints.lazy.map({ Int($0) }) {
                if codePoint < n {
                    delta += 1
                } else if codePoint == n {
                    var q = delta
                    var k = base
                    while true {
                        let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                        if q < t { break }
                        output.append(digit(t + (q - t) % (base - t)))
                        q = (q - t) / (base - t)
                        k += base
                    }
                    output.append(digit(q))
                    bias = adapt(delta, pointCount: handled + 1, isFirst: handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            delta += 1
            n += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bias after a code point is written (RFC 3492, section 6.1).
    private static func adapt(_ delta: Int, pointCount: Int, isFirst: Bool) -> Int {
        var delta = isFirst ? delta / damp : delta / 2
        delta += delta / pointCount
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + ((base - tMin + 1) * delta) / (delta + skew)
    }

    /// The basic code point for a digit value: a-z for 0-25, 0-9 for 26-35.
    private static func digit(_ value: Int) -> UInt8 {
        value < 26 ? UInt8(ascii: "a") + UInt8(value) : UInt8(ascii: "0") + UInt8(value - 26)
    }
}
