import Foundation
import Lupine
import LupineTestServer
import Testing

extension CLITests {
    /// httpie's request syntax and curl's connection options, checked by what the server received.
    @Suite struct CLIRequestTests {
        /// The JSON object `result` printed.
        private func echo(_ result: CLIResult) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: Any],
                         "not a JSON object: \(result.output) \(result.errors)")
        }

        private func header(_ name: String, in echo: [String: Any]) -> String? {
            (echo["headers"] as? [String: Any])?.first { $0.key.lowercased() == name.lowercased() }?.value as? String
        }

        @Test func typedFieldsMakeAJSONBodyInTheOrderTyped() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["post", server.url("/post"), "name=Lupine", "count:=3", "tags:=[\"a\",\"b\"]", "X-Custom:yes"])
            #expect(result.status == 0)
            let echo = try echo(result)
            #expect(echo["data"] as? String == #"{"name": "Lupine", "count": 3, "tags": ["a","b"]}"#)
            #expect(header("Content-Type", in: echo) == "application/json")
            #expect(header("X-Custom", in: echo) == "yes")
        }

        @Test func fieldsOfAPostAreAForm() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["post", server.url("/post"), "name=Lupine", "language=Swift 6"])
            let form = try echo(result)["form"] as? [String: Any]
            #expect(form?["name"] as? String == "Lupine")
            #expect(form?["language"] as? String == "Swift 6")
        }

        @Test func repeatedQueryKeysAreAllSent() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["get", server.url("/get?fixed=1"), "tag==a", "tag==b", "q==x y", "plain=1"])
            let url = try echo(result)["url"] as? String
            #expect(url == server.url("/get?fixed=1&tag=a&tag=b&q=x%20y&plain=1"))
        }

        @Test func bodyFromStandardInput() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["post", server.url("/post")], input: .data(Data("hello from a pipe".utf8)))
            #expect(try echo(result)["data"] as? String == "hello from a pipe")
        }

        @Test func bodyFromAFile() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let file = scratch.file("body.json")
            try Data(#"{"from": "a file"}"#.utf8).write(to: file)
            let result = try await CLIProcess.run(["put", "--json", server.url("/put"), "@\(file.path)"])
            let echo = try echo(result)
            #expect(echo["data"] as? String == #"{"from": "a file"}"#)
            #expect(header("Content-Type", in: echo) == "application/json")
        }

        @Test func unreadableBodyFileIs26() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["post", server.url("/post"), "@/nonexistent/lupine-body"])
            #expect(result.status == 26)
            #expect(result.errors == "lupine: Cannot read the body file '/nonexistent/lupine-body'.\n")
        }

        @Test func basicCredentials() async throws {
            let server = try await testServer()
            let accepted = try await CLIProcess.run(["get", "--fail", "-a", "user:secret", server.url("/basic-auth/user/secret")])
            #expect(accepted.status == 0)
            let refused = try await CLIProcess.run(["get", "--fail", "-a", "user:wrong", server.url("/basic-auth/user/secret")])
            #expect(refused.status == 22)
        }

        @Test func digestCredentialsAnswerTheChallenge() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["get", "--fail", "-v", "-a", "user:secret", server.url("/digest-auth/auth/user/secret")])
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.errors.contains("> Authorization: Digest "))
        }

        @Test func urlWithoutSchemeMeansHTTPAndLeadingColonMeansLocalhost() async throws {
            let server = try await testServer()
            let withoutScheme = try await CLIProcess.run(["get", "127.0.0.1:\(server.port)/get"])
            #expect(try echo(withoutScheme)["url"] as? String == server.url("/get"))
            let localhost = try await CLIProcess.run(["get", "--fail", ":\(server.port)/get"])
            #expect(localhost.status == 0, "\(localhost.errors)")
        }

        @Test func retryFollowsRetryPolicyAndPrintsOnlyTheFinalResponse() async throws {
            let server = try await testServer()
            let key = UUID().uuidString
            let result = try await CLIProcess.run(["get", "--retry", "3", "-v", server.url("/fail/2?key=\(key)")])
            #expect(result.status == 0)
            #expect(result.errors.contains("answered 503 Service Unavailable. Retrying (1 of 3)"))
            #expect(result.errors.contains("Retrying (2 of 3)"))
            #expect(!result.errors.contains("Retrying (3 of 3)"))
            #expect(try echo(result)["method"] as? String == "GET")
        }

        @Test func retriesRunOutOnTheLastResponse() async throws {
            let server = try await testServer()
            let key = UUID().uuidString
            let result = try await CLIProcess.run(["get", "--retry", "1", "--fail", server.url("/fail/5?key=\(key)")])
            #expect(result.status == 22)
            #expect(result.errors == "lupine: 127.0.0.1 port \(server.port) answered 503 Service Unavailable.\n")
        }

        @Test func cookiesLastOneCommandOnly() async throws {
            let server = try await testServer()
            let name = "lupine-cli-probe-\(UUID().uuidString.prefix(8))"
            // Within one command, a cookie set by a redirect hop goes with the next hop...
            let chained = try await CLIProcess.run(["get", server.url("/cookies/set?\(name)=1")])
            #expect(chained.output.contains(name), "\(chained.output)")
            // ...but no cookie jar outlives the command, not even for a cookie meant to last
            // (corelibs keeps the shared storage's lasting cookies in a file).
            let lasting = try await CLIProcess.run(["get", server.url("/cookies/attributes?name=\(name)&value=2&Max-Age=3600&Path=/")])
            #expect(lasting.status == 0)
            let later = try await CLIProcess.run(["get", server.url("/cookies")])
            #expect(later.status == 0)
            #expect(!later.output.contains(name))
        }

        @Test func proxyCarriesTheRequest() async throws {
            let server = try await testServer()
            let proxy = try await LupineTestProxy.start()
            let result = try await CLIProcess.run(["get", "--fail", "--proxy", "http://127.0.0.1:\(proxy.port)", server.url("/get")])
            let records = proxy.records
            try await proxy.shutdown()
            #expect(result.status == 0, "\(result.errors)")
            #expect(!records.isEmpty)
        }

        /// A proxy that, like squid by default, opens tunnels only to port 443: the line says the
        /// request went through the proxy, not that the origin refused the connection.
        @Test func aTunnelTheProxyRefusesIsNamedAsSuch() async throws {
            let proxy = try await LupineTestProxy.start()
            let result = try await CLIProcess.run(["get", "--proxy", "http://127.0.0.1:\(proxy.port)", "https://127.0.0.1:8443/get"])
            try await proxy.shutdown()
            #expect(result.status == 7)
            #expect(result.errors == "lupine: Cannot reach 127.0.0.1 port 8443 through the proxy at 127.0.0.1 port \(proxy.port): "
                + "the proxy is unreachable, refused to open a tunnel there, or could not connect to it.\n")
        }
    }

    /// `--pin-cert` and `--cert`/`--key` against TLS test servers (the fixtures of LupineTests).
    @Suite struct CLITLSTests {
        static func fixture(_ name: String) -> String {
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("LupineTests/Resources/TLS/\(name)").path
        }

        private func server(requireClientCertificate: Bool = false) async throws -> LupineTestServer {
            try await LupineTestServer.start(tls: LupineTestServerTLS(certificateChainFile: Self.fixture("chain.pem"),
                                                                      privateKeyFile: Self.fixture("leaf-key.pem"),
                                                                      clientCAFile: requireClientCertificate ? Self.fixture("ca.pem") : nil))
        }

        @Test func pinnedCertificateInTheChainIsTrusted() async throws {
            let server = try await server()
            let result = try await CLIProcess.run(["get", "--fail", "--pin-cert", Self.fixture("ca.pem"), server.url("/get")])
            try await server.shutdown()
            #expect(result.status == 0, "\(result.errors)")
        }

        @Test func otherPinnedCertificateIs35() async throws {
            let server = try await server()
            let result = try await CLIProcess.run(["get", "--pin-cert", Self.fixture("selfsigned.pem"), server.url("/get")])
            try await server.shutdown()
            #expect(result.status == 35)
            #expect(result.errors.hasPrefix("lupine: The certificate of 127.0.0.1 port \(server.port) is not trusted: "))
        }

        /// Without a pin, a certificate of a CA the system does not know is named as untrusted, not as
        /// a failed handshake with a server that might not speak TLS.
        @Test func aCertificateNoSystemRootIssuedIs35AndSaysSo() async throws {
            let server = try await server()
            let result = try await CLIProcess.run(["get", server.url("/get")])
            try await server.shutdown()
            #expect(result.status == 35)
            #expect(result.errors == "lupine: The certificate of 127.0.0.1 port \(server.port) is not trusted: its chain does not lead to "
                + "a system root, or it is not issued for this host name (--pin-cert FILE trusts a certificate of your own).\n")
        }

        @Test func unreadablePinnedCertificateIs77() async throws {
            let result = try await CLIProcess.run(["get", "--pin-cert", "/nonexistent/ca.pem", "https://127.0.0.1:1/"])
            #expect(result.status == 77)
        }

        @Test func clientCertificateOpensAServerThatRequiresOne() async throws {
            let server = try await server(requireClientCertificate: true)
            let pin = Self.fixture("ca.pem")
            let with = try await CLIProcess.run(["get", "--fail", "--pin-cert", pin, "--cert", Self.fixture("client.pem"),
                                                 "--key", Self.fixture("client-key.pem"), server.url("/get")])
            let without = try await CLIProcess.run(["get", "--pin-cert", pin, server.url("/get")])
            try await server.shutdown()
            #expect(with.status == 0, "\(with.errors)")
            #expect(without.status == 35)
        }
    }
}
