import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Mutual TLS: client certificates from a request's credential or the credential storage.
@Suite struct ClientCertificateTests {
    private func pemCredential() throws -> ClientCertificateCredential {
        try ClientCertificateCredential(certificateChain: [try TLSFixture.certificate("client.pem")],
                                        privateKey: try TLSFixture.data("client-key.pem"))
    }

    private func session(configuration: URLSessionConfiguration = .af.default) throws -> Session {
        let evaluator = PinnedCertificatesTrustEvaluator(certificates: [try TLSFixture.certificate("ca.der")], acceptSelfSignedCertificates: true)
        return trustingSession(evaluator, configuration: configuration)
    }

    @Test func serverRequiringAClientCertificateAcceptsAPEMCredential() async throws {
        let server = try await TLSFixture.server(requireClientCertificate: true)
        let session = try session()
        let response = await session.request(server.url("/get")).authenticate(with: try pemCredential())
            .serializingData().response
        #expect(response.error == nil)
        #expect(response.response?.statusCode == 200)
        #expect(server.hits(for: "/get") == 1)
        try await server.shutdown()
    }

    @Test func serverRequiringAClientCertificateAcceptsAPKCS12Credential() async throws {
        let server = try await TLSFixture.server(requireClientCertificate: true)
        let credential = try ClientCertificateCredential(pkcs12Data: try TLSFixture.data("client.p12"), passphrase: "lupine")
        #expect(credential.certificateChain.first == (try TLSFixture.certificate("client.pem")))
        let session = try session()
        let response = await session.request(server.url("/get")).authenticate(with: credential).serializingData().response
        #expect(response.response?.statusCode == 200)
        withExtendedLifetime(session) {}
        try await server.shutdown()
    }

    @Test func wrongPKCS12PassphraseIsAnError() throws {
        #expect(throws: (any Error).self) {
            try ClientCertificateCredential(pkcs12Data: try TLSFixture.data("client.p12"), passphrase: "wrong")
        }
    }

    @Test func serverRequiringAClientCertificateRejectsARequestWithoutOne() async throws {
        let server = try await TLSFixture.server(requireClientCertificate: true)
        let session = try session()
        let response = await session.request(server.url("/get")).serializingData().response
        #expect(response.error?.isSessionTaskError == true)
        #expect(response.response == nil)
        #expect(server.hits(for: "/get") == 0)
        withExtendedLifetime(session) {}
        try await server.shutdown()
    }

    @Test func credentialStorageSuppliesTheClientCertificateForItsServer() async throws {
        let server = try await TLSFixture.server(requireClientCertificate: true)
        let configuration = URLSessionConfiguration.af.default
        let storage = URLCredentialStorage()
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.port, protocol: "https", realm: nil,
                                       authenticationMethod: ClientCertificateCredential.authenticationMethod)
        storage.setDefaultCredential(try pemCredential(), for: space)
        configuration.urlCredentialStorage = storage
        let session = try session(configuration: configuration)
        let response = await session.request(server.url("/get")).serializingData().response
        #expect(response.response?.statusCode == 200, "\(String(describing: response.error))")
        withExtendedLifetime(session) {}
        try await server.shutdown()
    }
}
