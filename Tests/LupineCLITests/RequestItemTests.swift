@testable import LupineCLI
import Testing

/// httpie's request item syntax, as `lupine` parses it.
@Suite struct RequestItemTests {
    @Test(arguments: [
        ("Accept:application/json", RequestItem.header(name: "Accept", value: "application/json")),
        ("X-Time: 12:00", .header(name: "X-Time", value: "12:00")),
        ("q==lupine", .query(name: "q", value: "lupine")),
        ("q==", .query(name: "q", value: "")),
        ("name=Lupine", .field(name: "name", value: "Lupine")),
        ("url=http://example.com/a=b", .field(name: "url", value: "http://example.com/a=b")),
        ("a=b:c", .field(name: "a", value: "b:c")),
        ("n:=3", .jsonField(name: "n", json: "3")),
        ("tags:=[\"a\", 1]", .jsonField(name: "tags", json: "[\"a\", 1]")),
        ("ok:= true", .jsonField(name: "ok", json: "true")),
        ("a\\=b=c", .field(name: "a=b", value: "c")),
        ("@body.json", .bodyFile(path: "body.json")),
        ("@-", .bodyFile(path: "-")),
    ])
    func parsesTheFirstSeparator(item: String, expected: RequestItem) throws {
        #expect(try RequestItem.parse(item) == expected)
    }

    @Test(arguments: ["plain", "=value", "n:=not json", "Bad Name:value", "@"])
    func rejectsWhatIsNotAnItem(item: String) {
        #expect(throws: (any Error).self) { try RequestItem.parse(item) }
    }

    @Test func jsonBodyKeepsTheOrderTyped() {
        let body = RequestBody.jsonObject([.string(name: "z", value: "quote \" and\nline"), .json(name: "a", json: "[1,2]")])
        #expect(body == #"{"z": "quote \" and\nline", "a": [1,2]}"#)
    }
}

/// URLs typed without a scheme, as httpie completes them.
@Suite struct URLInputTests {
    @Test(arguments: [
        ("example.com/get", "http://example.com/get"),
        ("localhost:8080/get", "http://localhost:8080/get"),
        (":8080/path?q=1", "http://localhost:8080/path?q=1"),
        (":/path", "http://localhost/path"),
        (":", "http://localhost"),
        ("https://example.com", "https://example.com"),
        ("HTTP://example.com", "HTTP://example.com"),
        ("ftp://example.com/file", "ftp://example.com/file"),
        ("[::1]:8080/", "http://[::1]:8080/"),
    ])
    func completesTheSchemeAndHost(typed: String, expected: String) {
        #expect(URLInput.completed(typed) == expected)
    }
}

/// The progress line of downloads, drawn from numbers alone.
@Suite struct ProgressLineTests {
    @Test func knownLengthShowsPercentBarBytesRateAndTimeLeft() {
        let line = ProgressLine.render(received: 5 << 20, total: 20 << 20, bytesPerSecond: Double(1 << 20),
                                       elapsed: 5, finished: false, columns: 80)
        #expect(line.hasPrefix(" 25% [") == true)
        #expect(line.hasSuffix("] 5.00 MiB / 20.0 MiB  1.00 MiB/s  ETA 0:15"))
        #expect(line.count == 79)
        let bar = line.drop { $0 != "[" }.dropFirst().prefix { $0 != "]" }
        #expect(bar.filter { $0 == "=" }.count == bar.count / 4)
    }

    @Test func unknownLengthShowsBytesRateAndElapsedTime() {
        let line = ProgressLine.render(received: 1536, total: nil, bytesPerSecond: 512, elapsed: 3, finished: false, columns: 80)
        #expect(line == "1.50 KiB     512 B/s      0:03")
    }

    @Test func finishedLineShowsTheTimeTaken() {
        let line = ProgressLine.render(received: 3 << 30, total: 3 << 30, bytesPerSecond: Double(100 << 20),
                                       elapsed: 3725, finished: true, columns: 100)
        #expect(line.hasPrefix("100% [====="))
        #expect(line.hasSuffix("] 3.00 GiB / 3.00 GiB   100 MiB/s  in 1:02:05"))
    }

    @Test func narrowTerminalDropsTheBar() {
        let line = ProgressLine.render(received: 10, total: 100, bytesPerSecond: nil, elapsed: 0, finished: false, columns: 30)
        #expect(!line.contains("["))
        #expect(line.count <= 29)
    }
}
