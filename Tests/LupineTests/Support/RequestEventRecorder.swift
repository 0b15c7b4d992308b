import Foundation
@testable import Lupine
import NIOConcurrencyHelpers

/// Records the lifetime events of a request (resume, retrying, suspend, cancel, finish), in the
/// order its queue receives them: what a request driven by `ScriptedEnvironment` went through.
final class RequestEventRecorder: EventMonitor {
    let queue: DispatchQueue
    private let recorded = NIOLockedValueBox<[String]>([])

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    var events: [String] { recorded.withLockedValue { $0 } }

    func requestDidResume(_ request: Request) { recorded.withLockedValue { $0.append("resume") } }
    func requestIsRetrying(_ request: Request) { recorded.withLockedValue { $0.append("retrying") } }
    func requestDidSuspend(_ request: Request) { recorded.withLockedValue { $0.append("suspend") } }
    func requestDidCancel(_ request: Request) { recorded.withLockedValue { $0.append("cancel") } }
    func requestDidFinish(_ request: Request) { recorded.withLockedValue { $0.append("finish") } }
}

extension ScriptedStep {
    /// A response head with `fields`, in name order.
    static func head(_ statusCode: Int, fields: [String: String]) -> ScriptedStep {
        .head(statusCode, fields.sorted { $0.key < $1.key }.map { HTTPHeader(name: $0.key, value: $0.value) })
    }

    /// A part of the response body holding `text`.
    static func text(_ text: String) -> ScriptedStep { .body(Data(text.utf8)) }
}
