import Foundation
import Lupine

// The six steps of the tour. Each makes its request the way a user would and checks what came back.
extension DemoTour {
    func decodedGET() async throws {
        let response = await AF.request(server.url("/json"))
            .validate()
            .serializingDecodable(Slideshow.self)
            .response
        let slideshow = try response.result.get()
        show("decoded", "Slideshow(title: \"\(slideshow.title)\", author: \"\(slideshow.author)\", "
            + "slides: [\(slideshow.slides.map { "\"\($0.title)\"" }.joined(separator: ", "))])")
        show("timeline", response.timeline.description)
        try DemoFailure.check(slideshow.title == "Sample Slide Show" && slideshow.slides.count == 2,
                              "decoded an unexpected slideshow: \"\(slideshow.title)\", \(slideshow.slides.count) slides")
        try DemoFailure.check(response.timeline.totalDuration > 0,
                              "the timeline has no total duration: \(response.timeline)")
    }

    func formPOST() async throws {
        let parameters = ["name": "Lupine", "language": "Swift 6"]
        let echo = try await AF.request(server.url("/post"), method: .post, parameters: parameters)
            .validate()
            .serializingDecodable(ServerEcho.self)
            .value
        let form = echo.form ?? [:]
        show("server saw", "\(echo.method) with Content-Type: \(echo.header("Content-Type") ?? "none")")
        show("server parsed the form", form.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))
        try DemoFailure.check(echo.method == "POST", "the server saw \(echo.method), not POST")
        try DemoFailure.check(form == parameters, "the server received the form \(form), not \(parameters)")
    }

    func failingValidation() async throws {
        let response = await AF.request(server.url("/status/404")).validate().serializingData().response
        guard case let .failure(error) = response.result else {
            throw DemoFailure("a 404 passed validation")
        }
        show("error", error.errorDescription ?? "none")
        show("error.responseCode", error.responseCode.map(String.init) ?? "nil")
        show("error.isResponseValidationError", "\(error.isResponseValidationError)")
        try DemoFailure.check(error.isResponseValidationError, "expected a response validation error, got \(error)")
        try DemoFailure.check(error.responseCode == 404, "expected responseCode 404, got \(error.responseCode.map(String.init) ?? "nil")")
    }

    func redirect() async throws {
        let request = AF.request(server.url("/redirect/3"))
        let response = await request.validate().serializingDecodable(ServerEcho.self).response
        _ = try response.result.get()
        let finalURL = response.response?.url
        show("final URL", finalURL?.absoluteString ?? "none")
        show("request.performedRequests.count", "\(request.performedRequests.count)")
        show("response.timeline.redirectCount", "\(response.timeline.redirectCount)")
        try DemoFailure.check(finalURL?.path == "/get", "ended at \(finalURL?.absoluteString ?? "no URL"), not /get")
        try DemoFailure.check(response.timeline.redirectCount == 3,
                              "expected a redirect count of 3, got \(response.timeline.redirectCount)")
    }

    func gzipBody() async throws {
        let response = await AF.request(server.url("/gzip")).validate().serializingDecodable(ServerEcho.self).response
        let echo = try response.result.get()
        show("request Accept-Encoding", echo.header("Accept-Encoding") ?? "none")
        show("response Content-Encoding", response.response?.headers["Content-Encoding"] ?? "none")
        show("decoded body", "\(response.data?.count ?? 0) bytes of JSON, \"gzipped\": \(echo.gzipped.map(String.init) ?? "missing")")
        try DemoFailure.check(echo.gzipped == true, "the body did not say it was gzipped")
        try DemoFailure.check(echo.header("Accept-Encoding")?.contains("gzip") == true,
                              "the request did not advertise gzip in Accept-Encoding")
    }

    func completionHandler() async throws {
        let (response, ranOnMainThread) = await withCheckedContinuation { continuation in
            AF.request(server.url("/get"), parameters: ["style": "completion handler"])
                .validate()
                .responseDecodable(of: ServerEcho.self) { response in
                    continuation.resume(returning: (response, Thread.isMainThread))
                }
        }
        let echo = try response.result.get()
        show("handler ran on", ranOnMainThread ? "the main thread" : "the Session's serial callback queue (not main)")
        show("server saw the query", (echo.args ?? [:]).map { "\($0.key)=\($0.value)" }.joined(separator: "&"))
        show("timeline", response.timeline.description)
        try DemoFailure.check(echo.args?["style"] == "completion handler",
                              "the server saw the query \(echo.args ?? [:]), not style=completion handler")
    }
}
