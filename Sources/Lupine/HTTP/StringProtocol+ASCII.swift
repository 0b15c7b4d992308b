extension StringProtocol {
    /// Whether `self` and `other` are equal when ASCII letters are compared without case: the rule
    /// for header field names, methods, schemes and directives.
    ///
    /// Foundation's `caseInsensitiveCompare` goes through NSString on Linux and showed up at about
    /// 3% of a small request's CPU time; this compares UTF-8 bytes.
    func lupineEqualsIgnoringASCIICase<Other: StringProtocol>(_ other: Other) -> Bool {
        let lhs = utf8, rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        // Native strings hand out their bytes: a loop over two buffers, where zipping the two
        // views checks each string's representation at every byte.
        let contiguous = lhs.withContiguousStorageIfAvailable { left in
            rhs.withContiguousStorageIfAvailable { right in Self.equalIgnoringASCIICase(left, right) }
        }
        if let contiguous, let result = contiguous { return result }
        for (left, right) in zip(lhs, rhs) where left != right {
            guard left.lupineASCIILowercased == right.lupineASCIILowercased else { return false }
        }
        return true
    }

    private static func equalIgnoringASCIICase(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        for index in 0..<left.count where left[index] != right[index] {
            guard left[index].lupineASCIILowercased == right[index].lupineASCIILowercased else { return false }
        }
        return true
    }

    /// Whether `self` and `other` are equal after `lowercased()`, as Alamofire's `HTTPHeaders`
    /// compares names: ASCII names (all real ones) take the byte comparison, any other falls back
    /// to Unicode lowercasing, so "É" still finds "é".
    func lupineEqualsIgnoringCase<Other: StringProtocol>(_ other: Other) -> Bool {
        if utf8.allSatisfy({ $0 < 0x80 }) && other.utf8.allSatisfy({ $0 < 0x80 }) {
            return lupineEqualsIgnoringASCIICase(other)
        }
        return lowercased() == other.lowercased()
    }

}

extension StringProtocol {
    /// `self` without leading and trailing spaces, tabs, CRs and LFs.
    ///
    /// The whitespace HTTP fields carry is ASCII; Foundation's `trimmingCharacters(in:)` bridges
    /// through NSString on Linux, which showed up in the validation of every response.
    func lupineTrimmingASCIIWhitespace() -> SubSequence where UTF8View: BidirectionalCollection {
        // Over UTF-8 bytes, not Characters: no grapheme breaking. The bytes trimmed are ASCII, so
        // the indices found are Character boundaries too.
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { !$0.lupineIsASCIIWhitespace }),
              let last = bytes.lastIndex(where: { !$0.lupineIsASCIIWhitespace }) else { return self[endIndex...] }
        return self[first..<bytes.index(after: last)]
    }
}

extension UInt8 {
    /// The byte with an ASCII capital letter made lowercase; any other byte as it is.
    var lupineASCIILowercased: UInt8 {
        (0x41...0x5A).contains(self) ? self | 0x20 : self
    }

    /// Whether the byte is a space, tab, CR or LF: the whitespace HTTP fields carry.
    var lupineIsASCIIWhitespace: Bool {
        self == 0x20 || self == 0x09 || self == 0x0D || self == 0x0A
    }
}
