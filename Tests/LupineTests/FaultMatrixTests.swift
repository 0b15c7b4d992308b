import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// Faults at every phase of an exchange, on every path a request can take: each cell of the table
/// (FaultMatrixTests+Table.swift) breaks one phase in one way with a `LupineFaultServer` and checks
/// what the caller sees: one precise outcome, within its timeouts (a watchdog turns a hang into a
/// failure), no socket left open towards the server, and no temporary file left behind.
@Suite struct FaultMatrixTests {
    /// The ways a request reaches its server.
    enum Path: String, Sendable, CaseIterable {
        case http1, httpsTrusted, httpsDefault, http2, httpProxy, connectTunnel, socks, webSocket, webSocketThroughProxy

        var usesTLS: Bool { [.httpsTrusted, .httpsDefault, .http2, .connectTunnel].contains(self) }
        var isWebSocket: Bool { self == .webSocket || self == .webSocketThroughProxy }
    }

    /// The phases of the table: the server's phases, and the wait for a pooled connection.
    enum Phase: String, Sendable, CaseIterable {
        case connect, tlsHandshake, poolWait, requestBody, responseHead, responseBody, webSocketFrames

        var serverPhase: FaultPhase {
            switch self {
            case .connect: .connect
            case .tlsHandshake: .tlsHandshake
            case .poolWait, .responseHead: .responseHead
            case .requestBody: .requestBody
            case .responseBody: .responseBody
            case .webSocketFrames: .webSocketFrames
            }
        }
    }

    /// What the caller sees.
    enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// `AFError.sessionTaskFailed` wrapping a `URLError` with this code.
        case urlError(URLError.Code)
        /// `AFError.responseValidationFailed(.unacceptableStatusCode)` with this code.
        case status(Int)
        case succeeds
        /// Anything else (never promised).
        case other(String)

        init(_ error: AFError?) {
            switch error {
            case nil: self = .succeeds
            case let .responseValidationFailed(.unacceptableStatusCode(code))?: self = .status(code)
            case let error?:
                if let code = error.sessionTaskURLErrorCode { self = .urlError(code) } else { self = .other("\(error)") }
            }
        }

        var description: String {
            switch self {
            case let .urlError(code): "URLError(\(code.rawValue))"
            case let .status(code): "status \(code)"
            case .succeeds: "success"
            case let .other(text): text
            }
        }
    }

    enum Promise: Sendable {
        /// The cell ends in this outcome.
        case ends(Outcome)
        /// The cell cannot happen on this path, for the reason given.
        case notApplicable(String)
    }

    struct Row: Sendable {
        let path: Path
        let phase: Phase
        let promises: [Promise]

        init(_ path: Path, _ phase: Phase, _ promises: [Promise]) {
            self.path = path
            self.phase = phase
            self.promises = promises
        }
    }

    /// One cell of the table.
    struct Cell: Sendable, CustomTestStringConvertible {
        let path: Path
        let phase: Phase
        let kind: FaultKind
        let expected: Outcome

        var testDescription: String {
            "\(path.rawValue)/\(phase.rawValue)/\(kind.rawValue) -> \(expected)"
        }
    }

    /// Every cell that makes a promise.
    static var cells: [Cell] {
        table.flatMap { row in
            zip(FaultKind.allCases, row.promises).compactMap { kind, promise in
                switch promise {
                case let .ends(outcome):
                    return Cell(path: row.path, phase: row.phase, kind: kind, expected: outcome)
                case .notApplicable:
                    return nil
                }
            }
        }
    }

    @Test func theTableCoversEveryPathPhaseAndFault() {
        for path in Path.allCases {
            for phase in Phase.allCases {
                let rows = Self.table.filter { $0.path == path && $0.phase == phase }
                #expect(rows.count == 1, "\(path)/\(phase)")
                #expect(rows.first?.promises.count == FaultKind.allCases.count, "\(path)/\(phase)")
            }
        }
    }

    /// Cells running at once.
    static let gate = ConcurrencyLimit(12)

    @Test(arguments: cells)
    func faultEndsInItsPromisedOutcome(_ cell: Cell) async throws {
        try await Self.gate.run { try await check(cell) }
    }

    private func check(_ cell: Cell) async throws {
        let run = try await CellRun.start(cell)
        let observed = await run.perform()
        #expect(!observed.hung, "\(cell.testDescription): no outcome within the watchdog's 20 s")
        #expect(observed.outcome == cell.expected, "\(cell.testDescription): observed \(observed.outcome)")
        #expect(run.wentThroughProxy, "\(cell.testDescription): the proxy saw nothing")
        // An HTTP/2 stream's failure leaves the connection the other streams share open, as
        // URLSession does; it is closed when the Session shuts down (checked then).
        await run.finish(expectingOpenConnections: cell.expected == .succeeds || cell.path == .http2)
    }
}
