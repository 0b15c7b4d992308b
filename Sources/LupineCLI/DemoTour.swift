import LupineTestServer

/// The tour `lupine demo` runs: Lupine's everyday calls against a local LupineTestServer, each
/// checked, so that the demo doubles as a smoke test.
struct DemoTour: Sendable {
    let server: LupineTestServer

    /// How many seconds one step may take before the demo gives up.
    static let stepTimeLimit = 30

    var steps: [DemoStep] {
        [
            DemoStep(title: "A decoded JSON GET",
                     code: #"AF.request("\#(server.url("/json"))").validate().serializingDecodable(Slideshow.self).response"#,
                     run: decodedGET),
            DemoStep(title: "A form POST with parameters",
                     code: #"AF.request(url, method: .post, parameters: ["name": "Lupine", "language": "Swift 6"]).validate().serializingDecodable(ServerEcho.self).value"#,
                     run: formPOST),
            DemoStep(title: "Validation failing cleanly",
                     code: #"AF.request("\#(server.url("/status/404"))").validate().serializingData().response"#,
                     run: failingValidation),
            DemoStep(title: "Following redirects",
                     code: #"AF.request("\#(server.url("/redirect/3"))").validate().serializingDecodable(ServerEcho.self)"#,
                     run: redirect),
            DemoStep(title: "A gzip-encoded body",
                     code: #"AF.request("\#(server.url("/gzip"))").validate().serializingDecodable(ServerEcho.self)"#,
                     run: gzipBody),
            DemoStep(title: "A completion handler",
                     code: #"AF.request(url, parameters: ["style": "completion handler"]).validate().responseDecodable(of: ServerEcho.self) { response in ... }"#,
                     run: completionHandler),
        ]
    }

    /// Runs every step in order and stops at the first that misbehaves.
    ///
    /// - Returns: nil when every step behaved as expected, else the one-line reason.
    func run() async -> String? {
        let steps = steps
        let watchdog = DemoWatchdog(seconds: Self.stepTimeLimit)
        defer { watchdog.disarm() }
        for (index, step) in steps.enumerated() {
            let heading = "Step \(index + 1) of \(steps.count): \(step.title)"
            Console.line()
            Console.line("== \(heading)")
            Console.line("   \(step.code)")
            watchdog.arm(for: heading)
            do {
                try await step.run()
                Console.line("   ok")
            } catch let failure as DemoFailure {
                Console.line("   FAILED: \(failure)")
                return "\(heading): \(failure)"
            } catch {
                Console.line("   FAILED: \(error)")
                return "\(heading): \(error)"
            }
        }
        Console.line()
        return nil
    }

    /// Prints one observation of a step, indented under its heading.
    func show(_ label: String, _ value: String) {
        Console.line("   \(label): \(value)")
    }
}
