import Foundation
import Lupine
import Testing

/// Trust evaluation outside a connection, written the way pinning code for Apple platforms (and
/// Alamofire's own ServerTrustEvaluatorTests) is written: certificates and trusts made with the
/// Security functions, casts to the CoreFoundation types, policies set on the trust. Each case
/// states what the Security framework answers for the same chain.
///
/// The chains are in Resources/TLS/chains (Scripts/make-trust-chain-fixtures.sh): a root, two
/// intermediates, and leaves for test.lupine.example of every shape.
@Suite struct ServerTrustPolicyTests {
    private let host = "test.lupine.example"

    // MARK: Fixtures, as Apple-platform code makes them

    private static func certificate(_ name: String) throws -> SecCertificate {
        let url = try TLSFixture.directory().appendingPathComponent("chains/\(name).der")
        let data = try Data(contentsOf: url)
        return try #require(SecCertificateCreateWithData(nil, data as CFData))
    }

    private static func trust(_ names: [String]) throws -> SecTrust {
        let certificates = try names.map(certificate)
        let policy = SecPolicyCreateBasicX509()
        var trust: SecTrust?
        let status = SecTrustCreateWithCertificates(certificates as CFTypeRef, policy, &trust)
        #expect(status == errSecSuccess)
        return try #require(trust)
    }

    /// The leaf with its intermediate and the root, as a server may present them.
    private static func fullChain(_ leaf: String) throws -> SecTrust {
        let intermediate = ["wildcard", "multiple-dns-names", "signed-by-ca1", "dns-name-and-uri"].contains(leaf)
            ? "intermediate-ca1" : "intermediate-ca2"
        return try trust([leaf, intermediate, "root-ca"])
    }

    private static func anchorRootAlone(_ trust: SecTrust) throws {
        #expect(SecTrustSetAnchorCertificates(trust, [try certificate("root-ca")] as CFArray) == errSecSuccess)
        #expect(SecTrustSetAnchorCertificatesOnly(trust, true) == errSecSuccess)
    }

    private static func isValid(_ trust: SecTrust) -> Bool {
        Result { try trust.af.evaluate() }.isSuccess
    }

    private func passes(_ evaluator: any ServerTrustEvaluating, _ trust: SecTrust) -> Bool {
        Result { try evaluator.evaluate(trust, forHost: host) }.isSuccess
    }

    // MARK: Policies set on the trust

    @Test func anchoredRootPassesBasicX509ValidationWithOrWithoutTheRootInTheChain() throws {
        for trust in [try Self.fullChain("dns-name-and-uri"), try Self.trust(["dns-name-and-uri", "intermediate-ca1"])] {
            try Self.anchorRootAlone(trust)
            SecTrustSetPolicies(trust, [SecPolicyCreateBasicX509()] as CFTypeRef)
            #expect(Self.isValid(trust))
        }
    }

    @Test func basicX509ValidationIgnoresHostNamesButNotDates() throws {
        let missingNames = try Self.fullChain("missing-dns-name-and-uri")
        try Self.anchorRootAlone(missingNames)
        SecTrustSetPolicies(missingNames, [SecPolicyCreateBasicX509()] as CFTypeRef)
        #expect(Self.isValid(missingNames))

        let expired = try Self.fullChain("expired")
        try Self.anchorRootAlone(expired)
        SecTrustSetPolicies(expired, [SecPolicyCreateBasicX509()] as CFTypeRef)
        #expect(!Self.isValid(expired))
    }

    @Test func sslPolicyNeedsADNSNameForTheHost() throws {
        let cases: [(leaf: String, valid: Bool)] = [
            ("dns-name-and-uri", true), ("valid-dns-name", true), ("wildcard", true),
            ("missing-dns-name-and-uri", false), ("valid-uri", false), ("expired", false),
        ]
        for (leaf, valid) in cases {
            let trust = try Self.fullChain(leaf)
            try Self.anchorRootAlone(trust)
            SecTrustSetPolicies(trust, [SecPolicyCreateSSL(true, "test.lupine.example" as CFString)] as CFTypeRef)
            #expect(Self.isValid(trust) == valid, "\(leaf)")
        }
    }

    @Test func everySSLPolicyOfTheTrustMustPass() throws {
        let trust = try Self.fullChain("multiple-dns-names")
        try Self.anchorRootAlone(trust)
        let names = ["test.lupine.example", "blog.lupine.example", "www.lupine.example"]
        SecTrustSetPolicies(trust, names.map { SecPolicyCreateSSL(true, $0 as CFString) } as CFTypeRef)
        #expect(Self.isValid(trust))
        SecTrustSetPolicies(trust, (names + ["shop.lupine.example"]).map { SecPolicyCreateSSL(true, $0 as CFString) } as CFTypeRef)
        #expect(!Self.isValid(trust))
    }

    @Test func sslPolicyWithoutHostAcceptsALeafWithoutNames() throws {
        let trust = try Self.fullChain("missing-dns-name-and-uri")
        try Self.anchorRootAlone(trust)
        SecTrustSetPolicies(trust, [SecPolicyCreateSSL(true, nil)] as CFTypeRef)
        #expect(Self.isValid(trust))
    }

    @Test func anchorsAddedToTheSystemRootsStillTrustTheChain() throws {
        let trust = try Self.fullChain("valid-dns-name")
        SecTrustSetAnchorCertificates(trust, [try Self.certificate("root-ca")] as CFArray)
        SecTrustSetAnchorCertificatesOnly(trust, false)
        #expect(Self.isValid(trust))
        // The fixtures' root is no system root: without anchors the chain leads nowhere.
        #expect(!Self.isValid(try Self.fullChain("valid-dns-name")))
    }

    @Test func policiesOfTheWrongTypeAreRefused() throws {
        let trust = try Self.fullChain("valid-dns-name")
        #expect(SecTrustSetPolicies(trust, ["not a policy"] as CFTypeRef) != errSecSuccess)
        #expect(SecTrustSetAnchorCertificates(trust, ["not a certificate"] as CFArray) != errSecSuccess)
        var created: SecTrust?
        #expect(SecTrustCreateWithCertificates([] as [SecCertificate] as CFTypeRef, nil, &created) != errSecSuccess)
        #expect(created == nil)
    }

    // MARK: The chain the trust reports

    @Test func chainIsBuiltFromTheLeafAsTheSecurityFrameworkBuildsIt() throws {
        let root = try Self.certificate("root-ca"), leaf = try Self.certificate("valid-dns-name")
        let intermediate = try Self.certificate("intermediate-ca2")
        // A wrong intermediate is left out, and so is the root it would need.
        let wrongIntermediate = try Self.trust(["valid-dns-name", "intermediate-ca1", "root-ca"])
        #expect(wrongIntermediate.af.certificates == [leaf])
        // An anchored root the server did not send is part of the chain.
        let withoutRoot = try Self.trust(["valid-dns-name", "intermediate-ca2"])
        try Self.anchorRootAlone(withoutRoot)
        #expect(withoutRoot.af.certificates == [leaf, intermediate, root])
        #expect(SecTrustGetCertificateCount(withoutRoot) == 3)
        #expect(SecTrustGetCertificateAtIndex(withoutRoot, 2) == root)
        #expect(SecTrustGetCertificateAtIndex(withoutRoot, 3) == nil)
        #expect((SecTrustCopyCertificateChain(withoutRoot) as? [SecCertificate]) == [leaf, intermediate, root])
        #expect(SecTrustCopyKey(withoutRoot) == leaf.af.publicKey)
    }

    @Test func evaluationReportsItsErrorAndResult() throws {
        let trust = try Self.fullChain("expired")
        try Self.anchorRootAlone(trust)
        var error: CFError?
        #expect(!SecTrustEvaluateWithError(trust, &error))
        #expect(error?.code == -67818)
        #expect(throws: TrustFailure.self) {
            try trust.af.validate { status, result in TrustFailure(status: status, result: result) }
        }
        do {
            try trust.af.validate(policy: SecPolicyCreateSSL(true, "test.lupine.example" as CFString)) { status, result in
                TrustFailure(status: status, result: result)
            }
        } catch let failure as TrustFailure {
            #expect(failure.status == -67818)
            #expect(failure.result == .recoverableTrustFailure)
        }
        let valid = try Self.fullChain("valid-dns-name")
        try Self.anchorRootAlone(valid)
        try valid.af.validate(policy: SecPolicy.af.hostname(host)) { _, _ in TrustFailure(status: 0, result: .invalid) }
    }

    private struct TrustFailure: Error {
        let status: OSStatus
        let result: SecTrustResultType
    }

    // MARK: DefaultTrustEvaluator and RevocationTrustEvaluator

    @Test func defaultEvaluationNeedsAnAnchoredCompleteUnexpiredChain() throws {
        for validateHost in [false, true] {
            let evaluator = DefaultTrustEvaluator(validateHost: validateHost)
            let revocation = RevocationTrustEvaluator(validateHost: validateHost)
            let valid = try Self.fullChain("valid-dns-name")
            try Self.anchorRootAlone(valid)
            #expect(passes(evaluator, valid))
            #expect(passes(revocation, valid))
            #expect(!passes(evaluator, try Self.trust(["valid-dns-name", "intermediate-ca2"])))
            for shape in [["expired", "intermediate-ca2", "root-ca"], ["valid-dns-name", "root-ca"]] {
                let trust = try Self.trust(shape)
                try Self.anchorRootAlone(trust)
                #expect(!passes(evaluator, trust))
                #expect(!passes(revocation, trust))
            }
        }
    }

    @Test func hostValidationRejectsALeafWithoutTheNameAndAcceptsAWildcard() throws {
        let missing = try Self.fullChain("missing-dns-name-and-uri")
        try Self.anchorRootAlone(missing)
        #expect(!passes(DefaultTrustEvaluator(validateHost: true), missing))
        #expect(passes(DefaultTrustEvaluator(validateHost: false), missing))
        let wildcard = try Self.fullChain("wildcard")
        try Self.anchorRootAlone(wildcard)
        #expect(passes(DefaultTrustEvaluator(validateHost: true), wildcard))
        let failure = Result { try DefaultTrustEvaluator().evaluate(missing, forHost: host) }
        #expect((failure.failure as? AFError)?.isServerTrustEvaluationError == true)
    }

    // MARK: PinnedCertificatesTrustEvaluator

    @Test func anyPinnedCertificateOfTheChainPassesWithoutValidation() throws {
        for pinned in ["valid-dns-name", "intermediate-ca2", "root-ca"] {
            let evaluator = PinnedCertificatesTrustEvaluator(certificates: [try Self.certificate(pinned)],
                                                             performDefaultValidation: false, validateHost: false)
            #expect(passes(evaluator, try Self.fullChain("valid-dns-name")), "\(pinned)")
            #expect(passes(evaluator, try Self.fullChain("expired")) == (pinned != "valid-dns-name"), "\(pinned)")
        }
        let expiredPinned = PinnedCertificatesTrustEvaluator(certificates: [try Self.certificate("expired")],
                                                             performDefaultValidation: false, validateHost: false)
        #expect(passes(expiredPinned, try Self.fullChain("expired")))
    }

    @Test func certificatesOutsideTheChainFailPinning() throws {
        for pinned in ["signed-by-ca2", "intermediate-ca1"] {
            for validation in [false, true] {
                let evaluator = PinnedCertificatesTrustEvaluator(certificates: [try Self.certificate(pinned)],
                                                                 performDefaultValidation: validation, validateHost: false)
                #expect(!passes(evaluator, try Self.fullChain("valid-dns-name")))
            }
        }
        let wrong = PinnedCertificatesTrustEvaluator(certificates: [try Self.certificate("signed-by-ca2")],
                                                     performDefaultValidation: false, validateHost: false)
        let failure = Result { try wrong.evaluate(try Self.fullChain("valid-dns-name"), forHost: host) }
        guard case let .serverTrustEvaluationFailed(.certificatePinningFailed(_, _, pinned, server))? = failure.failure as? AFError else {
            Issue.record("expected certificatePinningFailed, got \(String(describing: failure.failure))")
            return
        }
        #expect(pinned.count == 1)
        #expect(server.count == 3)
    }

    @Test func validationStillAppliesToAPinnedChain() throws {
        // Default validation runs before pinning: an expired leaf fails even when pinned.
        for pinned in ["expired", "intermediate-ca2"] {
            let evaluator = PinnedCertificatesTrustEvaluator(certificates: [try Self.certificate(pinned)], validateHost: false)
            let trust = try Self.fullChain("expired")
            try Self.anchorRootAlone(trust)
            #expect(!passes(evaluator, trust))
        }
    }

    @Test func pinnedCertificatesAcceptedAsSelfSignedBecomeTheAnchors() throws {
        for pinned in ["valid-dns-name", "intermediate-ca2", "root-ca"] {
            let evaluator = PinnedCertificatesTrustEvaluator(certificates: [try Self.certificate(pinned)],
                                                             acceptSelfSignedCertificates: true)
            #expect(passes(evaluator, try Self.fullChain("valid-dns-name")), "\(pinned)")
        }
    }

    @Test func oneMatchAmongManyPinsIsEnough() throws {
        let pins = try ["multiple-dns-names", "signed-by-ca1", "expired", "wildcard", "dns-name-and-uri"].map(Self.certificate)
        let evaluator = PinnedCertificatesTrustEvaluator(certificates: pins, performDefaultValidation: false, validateHost: false)
        #expect(passes(evaluator, try Self.fullChain("expired")))
    }

    // MARK: PublicKeysTrustEvaluator

    @Test func pinnedKeysFollowTheChainTheTrustBuilds() throws {
        func evaluator(_ names: [String]) throws -> PublicKeysTrustEvaluator {
            PublicKeysTrustEvaluator(keys: try names.map(Self.certificate).af.publicKeys,
                                     performDefaultValidation: false, validateHost: false)
        }
        let missingIntermediate = try Self.trust(["valid-dns-name", "root-ca"])
        try Self.anchorRootAlone(missingIntermediate)
        #expect(passes(try evaluator(["valid-dns-name"]), missingIntermediate))
        // The root cannot be reached from the leaf without its intermediate: its key is not in the chain.
        #expect(!passes(try evaluator(["root-ca"]), missingIntermediate))

        let wrongIntermediate = try Self.trust(["valid-dns-name", "intermediate-ca1", "root-ca"])
        try Self.anchorRootAlone(wrongIntermediate)
        #expect(passes(try evaluator(["valid-dns-name"]), wrongIntermediate))

        for pinned in ["expired", "intermediate-ca2", "root-ca"] {
            let expired = try Self.fullChain("expired")
            try Self.anchorRootAlone(expired)
            #expect(passes(try evaluator([pinned]), expired), "\(pinned)")
        }
    }

    @Test func keysOutsideTheChainFailWithOrWithoutHostValidation() throws {
        for validateHost in [false, true] {
            let evaluator = PublicKeysTrustEvaluator(keys: [try Self.certificate("signed-by-ca2")].af.publicKeys,
                                                     validateHost: validateHost)
            let trust = try Self.fullChain("valid-dns-name")
            try Self.anchorRootAlone(trust)
            #expect(!passes(evaluator, trust))
        }
        let pinnedRootAndBackup = PublicKeysTrustEvaluator(keys: try ["root-ca", "signed-by-ca1"].map(Self.certificate).af.publicKeys)
        let trust = try Self.fullChain("valid-dns-name")
        try Self.anchorRootAlone(trust)
        #expect(passes(pinnedRootAndBackup, trust))
    }

    // MARK: DisabledTrustEvaluator and CompositeTrustEvaluator

    @Test func disabledEvaluationPassesAnything() throws {
        #expect(passes(DisabledTrustEvaluator(), try Self.trust(["valid-dns-name", "root-ca"])))
        #expect(passes(DisabledTrustEvaluator(), try Self.fullChain("expired")))
    }

    @Test func compositeFailsWhenAnyMemberFails() throws {
        let composite = CompositeTrustEvaluator(evaluators: [DefaultTrustEvaluator(validateHost: false),
                                                             RevocationTrustEvaluator(validateHost: false)])
        #expect(!passes(composite, try Self.trust(["valid-dns-name", "intermediate-ca2"])))
        let expired = try Self.fullChain("expired")
        try Self.anchorRootAlone(expired)
        #expect(!passes(composite, expired))
        let valid = try Self.fullChain("valid-dns-name")
        try Self.anchorRootAlone(valid)
        #expect(passes(composite, valid))
    }
}

private extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
