import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// RFC 9111 as `HTTPCacheRules` applies it, without a network: storability, freshness, Vary,
/// validators, 304 updates and the request's cache policy.
@Suite struct HTTPCacheRulesTests {
    private static let received = Date(timeIntervalSince1970: 1_700_000_000)

    private static func entry(_ headers: [String: String], status: Int = 200, vary: [String: String] = [:]) -> HTTPCacheEntry {
        HTTPCacheEntry(statusCode: status, headerFields: headers, requestTime: received, responseTime: received, varyValues: vary)
    }

    private static func decide(_ stored: HTTPCacheEntry?,
                               after seconds: TimeInterval,
                               request: [String: String] = [:],
                               policy: URLRequest.CachePolicy = .useProtocolCachePolicy,
                               method: String = "GET") -> HTTPCacheRules.Decision {
        HTTPCacheRules.decision(method: method, requestHeaders: request, policy: policy, stored: stored,
                                now: received.addingTimeInterval(seconds))
    }

    // MARK: Freshness

    @Test func maxAgeResponseIsUsedWhileFreshAndRevalidatedWithItsETagOnceStale() {
        let stored = Self.entry(["Cache-Control": "max-age=60", "ETag": "\"v1\""])
        #expect(Self.decide(stored, after: 59) == .useStored)
        #expect(Self.decide(stored, after: 61) == .revalidate([HTTPHeader(name: "If-None-Match", value: "\"v1\"")]))
    }

    @Test func staleResponseWithoutValidatorsIsLoadedAgain() {
        #expect(Self.decide(Self.entry(["Cache-Control": "max-age=10"]), after: 11) == .load)
    }

    @Test func maxAgeWinsOverExpires() {
        let stored = Self.entry(["Cache-Control": "max-age=0", "Expires": "Wed, 21 Oct 2099 07:28:00 GMT"])
        #expect(HTTPCacheRules.freshnessLifetime(stored) == 0)
    }

    @Test func expiresIsMeasuredFromTheDateHeader() {
        let stored = Self.entry(["Date": "Tue, 14 Nov 2023 22:13:20 GMT", "Expires": "Tue, 14 Nov 2023 22:23:20 GMT"])
        #expect(HTTPCacheRules.freshnessLifetime(stored) == 600)
    }

    @Test func invalidExpiresMeansAlreadyExpired() {
        #expect(HTTPCacheRules.freshnessLifetime(Self.entry(["Expires": "0"])) == 0)
    }

    @Test func heuristicFreshnessIsATenthOfTheTimeSinceLastModified() {
        let stored = Self.entry(["Date": "Tue, 14 Nov 2023 22:13:20 GMT", "Last-Modified": "Sat, 04 Nov 2023 22:13:20 GMT"])
        #expect(HTTPCacheRules.freshnessLifetime(stored) == 86_400)
        // A status that is not heuristically cacheable gets no heuristic lifetime.
        let created = Self.entry(["Date": "Tue, 14 Nov 2023 22:13:20 GMT", "Last-Modified": "Sat, 04 Nov 2023 22:13:20 GMT"],
                                 status: 201)
        #expect(HTTPCacheRules.freshnessLifetime(created) == 0)
    }

    @Test func ageHeaderAndResidentTimeAddUp() {
        let stored = Self.entry(["Age": "30", "Cache-Control": "max-age=60"])
        #expect(HTTPCacheRules.currentAge(stored, now: Self.received.addingTimeInterval(20)) == 50)
        #expect(Self.decide(stored, after: 29) == .useStored)
        #expect(Self.decide(stored, after: 31) == .load)
    }

    // MARK: Directives

    @Test func noCacheResponseIsAlwaysRevalidated() {
        let stored = Self.entry(["Cache-Control": "no-cache, max-age=600", "Last-Modified": "Sat, 04 Nov 2023 22:13:20 GMT"])
        #expect(Self.decide(stored, after: 1) == .revalidate([HTTPHeader(name: "If-Modified-Since", value: "Sat, 04 Nov 2023 22:13:20 GMT")]))
    }

    @Test func requestNoCacheAndMaxAgeZeroForceRevalidation() {
        let stored = Self.entry(["Cache-Control": "max-age=600", "ETag": "\"e\""])
        let revalidate = HTTPCacheRules.Decision.revalidate([HTTPHeader(name: "If-None-Match", value: "\"e\"")])
        #expect(Self.decide(stored, after: 1, request: ["Cache-Control": "no-cache"]) == revalidate)
        #expect(Self.decide(stored, after: 1, request: ["Cache-Control": "max-age=0"]) == revalidate)
        #expect(Self.decide(stored, after: 1, request: ["Pragma": "no-cache"]) == revalidate)
    }

    @Test func maxStaleAcceptsAStaleResponseUnlessMustRevalidate() {
        let stored = Self.entry(["Cache-Control": "max-age=10"])
        #expect(Self.decide(stored, after: 20, request: ["Cache-Control": "max-stale=15"]) == .useStored)
        #expect(Self.decide(stored, after: 30, request: ["Cache-Control": "max-stale=15"]) == .load)
        #expect(Self.decide(stored, after: 10_000, request: ["Cache-Control": "max-stale"]) == .useStored)
        let strict = Self.entry(["Cache-Control": "max-age=10, must-revalidate"])
        #expect(Self.decide(strict, after: 20, request: ["Cache-Control": "max-stale"]) == .load)
    }

    @Test func onlyIfCachedFailsWithoutAFreshResponse() {
        #expect(Self.decide(nil, after: 0, request: ["Cache-Control": "only-if-cached"]) == .fail)
    }

    @Test func noStoreAndVaryStarAreNeverStoredButPrivateIs() {
        func storable(_ headers: [String: String], request: [String: String] = [:], status: Int = 200) -> Bool {
            HTTPCacheRules.isStorable(method: "GET", requestHeaders: request, statusCode: status, responseHeaders: headers)
        }
        #expect(!storable(["Cache-Control": "no-store"]))
        #expect(!storable([:], request: ["Cache-Control": "no-store"]))
        #expect(!storable(["Vary": "*"]))
        #expect(storable(["Cache-Control": "private, max-age=60"]))
        #expect(!storable([:], status: 206))
        #expect(!storable([:], status: 201))
        #expect(storable(["Cache-Control": "max-age=60"], status: 201))
        #expect(!HTTPCacheRules.isStorable(method: "POST", requestHeaders: [:], statusCode: 200, responseHeaders: ["Cache-Control": "max-age=60"]))
    }

    // MARK: Vary

    @Test func varySelectsOnlyTheRequestsWithTheSameHeaderValues() {
        let responseHeaders = ["Cache-Control": "max-age=60", "Vary": "Accept-Language"]
        let values = HTTPCacheRules.varyValues(responseHeaders: responseHeaders, requestHeaders: ["accept-language": "fr"])
        let stored = Self.entry(responseHeaders, vary: values)
        #expect(Self.decide(stored, after: 1, request: ["Accept-Language": "fr"]) == .useStored)
        #expect(Self.decide(stored, after: 1, request: ["Accept-Language": "de"]) == .load)
        #expect(Self.decide(stored, after: 1) == .load)
    }

    // MARK: Policies and methods

    @Test func cachePoliciesOverrideFreshness() {
        let stale = Self.entry(["Cache-Control": "max-age=1", "ETag": "\"e\""])
        let fresh = Self.entry(["Cache-Control": "max-age=600"])
        #expect(Self.decide(fresh, after: 1, policy: .reloadIgnoringLocalCacheData) == .load)
        #expect(Self.decide(stale, after: 100, policy: .returnCacheDataElseLoad) == .useStored)
        #expect(Self.decide(nil, after: 0, policy: .returnCacheDataElseLoad) == .load)
        #expect(Self.decide(stale, after: 100, policy: .returnCacheDataDontLoad) == .useStored)
        #expect(Self.decide(nil, after: 0, policy: .returnCacheDataDontLoad) == .fail)
        #expect(Self.decide(fresh, after: 1, method: "POST") == .load)
    }

    @Test func unsafeMethodsInvalidateOnSuccessOnly() {
        #expect(HTTPCacheRules.invalidatesStoredResponse(method: "POST", statusCode: 201))
        #expect(HTTPCacheRules.invalidatesStoredResponse(method: "DELETE", statusCode: 204))
        #expect(!HTTPCacheRules.invalidatesStoredResponse(method: "POST", statusCode: 500))
        #expect(!HTTPCacheRules.invalidatesStoredResponse(method: "GET", statusCode: 200))
        // Methods are compared without regard to case, as before; PATCH and custom ones are unsafe.
        #expect(!HTTPCacheRules.invalidatesStoredResponse(method: "head", statusCode: 200))
        #expect(!HTTPCacheRules.invalidatesStoredResponse(method: "Options", statusCode: 204))
        #expect(HTTPCacheRules.invalidatesStoredResponse(method: "patch", statusCode: 200))
        #expect(HTTPCacheRules.invalidatesStoredResponse(method: "PURGE", statusCode: 200))
    }

    // MARK: 304

    @Test func notModifiedReplacesHeadersButKeepsContentLength() {
        let stored = Self.entry(["Content-Length": "42", "Cache-Control": "max-age=0", "ETag": "\"e\"", "X-Version": "1"])
        let later = Self.received.addingTimeInterval(100)
        let updated = HTTPCacheRules.updated(stored, with: ["content-length": "0", "cache-control": "max-age=60", "x-version": "2"],
                                             requestTime: later, responseTime: later)
        #expect(updated.header("Content-Length") == "42")
        #expect(updated.header("Cache-Control") == "max-age=60")
        #expect(updated.header("X-Version") == "2")
        #expect(updated.header("ETag") == "\"e\"")
        #expect(HTTPCacheRules.decision(method: "GET", requestHeaders: [:], policy: .useProtocolCachePolicy, stored: updated,
                                        now: later.addingTimeInterval(30)) == .useStored)
    }

    @Test func anEntryWhoseFieldsSayNoStoreIsNeverUsed() {
        let stored = Self.entry(["Cache-Control": "no-store", "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"])
        #expect(HTTPCacheRules.freshnessLifetime(stored) > 0)
        #expect(Self.decide(stored, after: 1) == .load)
        #expect(Self.decide(stored, after: 1, policy: .returnCacheDataElseLoad) == .load)
        #expect(Self.decide(stored, after: 1, policy: .returnCacheDataDontLoad) == .fail)
    }

    @Test func heuristicAndExplicitFreshnessAreWorkedOutOnceWhenTheEntryIsMade() {
        let heuristic = Self.entry(["Date": "Wed, 21 Oct 2015 07:28:00 GMT", "Last-Modified": "Wed, 11 Oct 2015 07:28:00 GMT"])
        let explicit = Self.entry(["Cache-Control": "max-age=86400"])
        #expect(heuristic.freshnessLifetime == 86_400)
        #expect(explicit.freshnessLifetime == 86_400)
    }

    // MARK: Parsing

    @Test func cacheControlReadsQuotedArgumentsAndMalformedAges() {
        let control = CacheControl(["no-cache=\"Set-Cookie, X-A\", MAX-AGE=5", "max-age=9, s-maxage=abc"])
        #expect(control.has("no-cache"))
        #expect(control.seconds("max-age") == .seconds(5))
        #expect(control.seconds("s-maxage") == .invalid)
        #expect(control.seconds("min-fresh") == .absent)
    }

    @Test func aDirectiveIsFoundInPlaceAsTheParserFindsIt() {
        let values = ["no-store", " No-Store ", "max-age=5, no-store", "no-store=\"x\"", "private=\"a, no-store\"",
                      "no-storex", "max-age=no-store", "", ",,no-store,", "\tno-store\t", "no-store ,max-age=1",
                      "a=\"x\", no-store", "a=\"x, y\",no-store", "no", "no-stor", "é, no-store", "no-store\u{301}"]
        for value in values {
            #expect(CacheControl.lists("no-store", in: value) == CacheControl([value]).has("no-store"), "\(value)")
        }
        #expect(CacheControl.lists("no-store", in: "max-age=5, NO-STORE"))
        #expect(!CacheControl.lists("no-store", in: "private=\"a, no-store\""))
    }

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
    func httpDatesOfEveryFormatParse(_ text: String) {
        #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test func nonDatesDoNotParse() {
        #expect(HTTPDate.parse("0") == nil)
        #expect(HTTPDate.parse("tomorrow") == nil)
        #expect(HTTPDate.parse("Sun, 36 Nov 1994 08:49:37 GMT") == nil)
    }
}
