import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// Receives the transport events of one hop of a request's exchange.
///
/// A followed redirect's body is discarded and, when the hop ends, the next hop starts from the
/// request URLSession would have sent. Any other response goes to the Request, which hands the
/// body to its sink (memory, file or stream).
///
/// The cookies of every head from the network are stored. With a cache `action` (data requests),
/// a 304 answering a revalidation is replaced by the stored response, and a complete response from
/// the network is offered to the cache; a replayed stored response changes neither cookies nor cache.
final class RequestExchange: TransportEvents {
    private let request: Request
    /// The hop of the request's state machine these events belong to.
    private let hopID: Int
    /// What the hop sends; its merged URLRequest (`urlRequest`) is made only when read.
    private let outgoing: OutgoingRequest
    /// The proxy the hop goes through: a 407 refusing its tunnel may be answered.
    private let proxy: TransportProxy?
    /// nil when the request bypasses the cache (downloads).
    private let cacheAction: HTTPCacheAction?
    private let requestTime = Date()

    init(request: Request, hopID: Int, outgoing: OutgoingRequest, proxy: TransportProxy? = nil, cacheAction: HTTPCacheAction? = nil) {
        self.request = request
        self.hopID = hopID
        self.outgoing = outgoing
        self.proxy = proxy
        self.cacheAction = cacheAction
    }

    /// The hop's request as sent, the Session's fields merged in.
    private var urlRequest: URLRequest { outgoing.urlRequest }

    private var isReplay: Bool {
        if case .replay? = cacheAction { return true }
        return false
    }

    func transportDidSendBodyBytes(_ task: any TransportTask, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?) {
        request.updateUploadProgress(totalBytesSent: totalBytesSent, totalBytesExpected: totalBytesExpectedToSend)
    }

    func transportDidSendRequest(_ task: any TransportTask) {
        request.exchangeDidSendRequest(outgoing)
    }

    func transportDidReceive(_ task: any TransportTask, head received: TransportResponseHead) {
        // Events may come before `execute` returns: the demand must know the hop's task first.
        request.readDemand.attach(task, hop: hopID)
        let now = Date()
        request.hopResponseArrived(hopID, task: task, at: now)
        // Cookies and invalidation read the URL, the method and the cookie policy: the base's.
        let storage = isReplay ? nil : request.storageWork(forHeadFromNetwork: received, sentAs: outgoing.base)
        guard mayNeedADecision(received) else {
            if let storage { request.onRootQueue(storage) }
            // The common case, on the transport's thread: the response goes to the request's sink.
            request.exchangeDidReceive(replayedResponse(received) ?? makeResponse(received), task: task)
            return
        }
        // A redirect, a challenge or a revalidation is decided on the Session's queue, where the
        // storage, the credential storage and the redirect handler may be asked (they are the
        // user's code and may block); the body and the end of the hop wait for the decision.
        request.readDemand.add(.headDecision, ifTask: task)
        request.onRootQueue {
            storage?()
            self.decide(received, task: task, responseTime: now)
            self.request.readDemand.remove(.headDecision, ifTask: task)
        }
    }

    /// Whether `head` may be a redirect to follow, a challenge to answer or the 304 of a
    /// revalidation: decided from its status alone, on the transport's thread.
    private func mayNeedADecision(_ head: TransportResponseHead) -> Bool {
        switch head.statusCode {
        case 300...399, 401: true
        default: false
        }
    }

    /// What the response head of the hop means for the hop, on the Session's queue: the stored
    /// response a 304 revalidated, a challenge answered, a redirect followed (after asking the
    /// redirect handler) or refused, or the response delivered to the request.
    private func decide(_ received: TransportResponseHead, task: any TransportTask, responseTime now: Date) {
        var head = received
        if case let .revalidate(stored, _)? = cacheAction, received.statusCode == 304 {
            let refreshed = request.refreshStoredResponse(stored, with: received, sentAs: urlRequest,
                                                          requestTime: requestTime, responseTime: now)
            request.hopDecided(hopID, .deliverRevalidated(refreshed))
            head = refreshed.head()
        }
        if let answered = request.requestAnsweringChallenge(of: head, to: self.urlRequest) {
            request.hopDecided(hopID, .answerChallenge(answered))
            return
        }
        let location = head.headerFields.first { $0.name.lupineEqualsIgnoringASCIICase("Location") }?.value
        var decision = RedirectRules.decision(for: self.urlRequest, statusCode: head.statusCode, location: location,
                                              redirectsSoFar: request.redirectsSoFar)
        // A URLProtocol that redirects chooses the next request itself, as with URLSession.
        if case .follow = decision, let chosen = (task as? URLProtocolExchange)?.redirectRequest { decision = .follow(chosen) }
        switch decision {
        case let .refuse(code):
            request.hopDecided(hopID, .refuse(code))
        case .notARedirect:
            request.exchangeDidReceive(replayedResponse(head) ?? makeResponse(head), task: task)
        case let .follow(proposed):
            guard let handler = request.effectiveRedirectHandler, let response = makeResponse(head).response else {
                request.hopDecided(hopID, .follow(proposed))
                return
            }
            // The body waits for the handler's answer, which may come before this returns.
            request.readDemand.add(.redirectHandler, ifTask: task)
            askRedirectHandler(handler, proposed: proposed, response: response, head: head, task: task)
        }
    }

    /// Asks `handler` about a redirect: its request is followed, or with nil the 3xx response is
    /// delivered as the final one, body included.
    private func askRedirectHandler(_ handler: any RedirectHandler,
                                    proposed: URLRequest,
                                    response: HTTPURLResponse,
                                    head: TransportResponseHead,
                                    task: any TransportTask) {
        guard let hopTask = request.attemptTaskFacade(showing: response) else {
            // Every hop belongs to an attempt; without one, follow as if there were no handler.
            request.hopDecided(hopID, .follow(proposed))
            request.readDemand.remove(.redirectHandler, ifTask: task)
            return
        }
        let answered = NIOLockedValueBox(false)
        ThreadContract.userCode("a redirect handler")
        handler.task(hopTask, willBeRedirectedTo: proposed, for: response) { [self] chosen in
            let alreadyAnswered = answered.withLockedValue { value -> Bool in
                defer { value = true }
                return value
            }
            guard !alreadyAnswered else { return }
            if let chosen {
                request.hopDecided(hopID, .follow(chosen))
            } else {
                request.exchangeDidReceive(LazyHTTPResponse(url: response.url ?? url, head: head, response: response), task: task)
            }
            request.readDemand.remove(.redirectHandler, ifTask: task)
        }
    }

    /// A cache replay's response, made once by the stored response for a URL and an `Age` value
    /// (corelibs' HTTPURLResponse initializer was the largest cost of a cache hit).
    private func replayedResponse(_ head: TransportResponseHead) -> LazyHTTPResponse? {
        guard case let .replay(stored)? = cacheAction, let url = outgoing.url,
              let response = stored.httpURLResponse(for: url, head: head) else { return nil }
        return LazyHTTPResponse(url: url, head: head, response: response)
    }

    /// The response of `head`, its `HTTPURLResponse` made only when something reads it.
    private func makeResponse(_ head: TransportResponseHead) -> LazyHTTPResponse {
        LazyHTTPResponse(url: url, head: head)
    }

    private var url: URL { outgoing.url ?? URL(fileURLWithPath: "/") }

    func transportDidReceive(_ task: any TransportTask, bodyPart: Data) {
        guard request.hopDeliversBody(hopID) else { return }
        request.exchangeDidReceive(bodyPart: bodyPart, task: task)
    }

    func transportDidComplete(_ task: any TransportTask, error: URLError?) {
        request.readDemand.detach(task, hop: hopID)
        if error != nil, let protocolFailure = (task as? URLProtocolExchange)?.protocolFailure {
            // A URLProtocol's own error, as Alamofire reports it.
            request.didCompleteTransfer(error: protocolFailure)
            return
        }
        if let error {
            if request.mayAnswerProxyChallenge(failure: error, proxy: proxy) {
                // The credential storage is asked on the Session's queue.
                request.onRootQueue { self.answerProxyChallengeOrFail(error) }
                return
            }
            // A server rejected during the handshake fails with the evaluator's AFError, as in
            // Alamofire: the task fails early with it, then completes as cancelled (URLSession
            // cancels the task whose trust challenge was refused).
            if let trustError = error.lupineServerTrustError {
                request.attemptTaskDidFailEarly(with: trustError)
                request.didCompleteTransfer(error: .sessionTaskFailed(error: URLError(.cancelled, userInfo: [
                    NSURLErrorFailingURLErrorKey: outgoing.url as Any,
                    NSLocalizedDescriptionKey: TransportErrorMapping.description(of: .cancelled),
                ])))
                return
            }
            request.didCompleteTransfer(error: .sessionTaskFailed(error: error))
            return
        }
        var cacheOffer: Request.CacheOffer?
        if cacheAction != nil, !isReplay {
            // Offered on the root queue with the completion, before the validators and the
            // handlers, so that the response is stored by the time handlers run.
            cacheOffer = Request.CacheOffer(outgoing: outgoing, requestTime: requestTime,
                                            responseTime: request.hopResponseTime(hopID) ?? requestTime)
        }
        request.exchangeDidComplete(hop: hopID, url: outgoing.url, task: task, cacheOffer: cacheOffer)
    }

    /// On the Session's queue: the hop refused by the proxy's 407 goes out again with the
    /// credential, or the transfer fails with `error`.
    private func answerProxyChallengeOrFail(_ error: URLError) {
        if request.answersProxyChallenge(failure: error, proxy: proxy) {
            request.exchangeDidRetryHop(hopID, with: urlRequest)
        } else {
            request.didCompleteTransfer(error: .sessionTaskFailed(error: error))
        }
    }
}

/// How repeated response header fields become the single-valued dictionary of `HTTPURLResponse`.
enum ResponseHeaderFields {
    /// Fields with the same name (case-insensitive) are joined with ", " as RFC 9110 allows. For
    /// `Set-Cookie` this is what Apple's URLSession does too, and what `HTTPCookie.cookies(
    /// withResponseHeaderFields:for:)` parses (it tells the commas of `Expires` dates apart); the
    /// separate lines are kept as received in the request's ordered field list. The first
    /// spelling of a name is kept.
    static func dictionary(from fields: [HTTPHeader]) -> [String: String] {
        guard fields.count <= 32 else { return dictionaryOfManyFields(fields) }
        var result: [String: String] = [:]
        result.reserveCapacity(fields.count)
        for (index, field) in fields.enumerated() {
            // The first field with this name (any case) gives the spelling; a response has few
            // fields, so a scan costs less than lowercasing every name into a second dictionary.
            if let first = fields[..<index].first(where: { $0.name.lupineEqualsIgnoringASCIICase(field.name) }),
               let existing = result[first.name] {
                result[first.name] = existing + ", " + field.value
            } else {
                result[field.name] = field.value
            }
        }
        return result
    }

    /// Same, for a long field list: names are matched through a lowercased index.
    private static func dictionaryOfManyFields(_ fields: [HTTPHeader]) -> [String: String] {
        var result: [String: String] = [:]
        var spelling: [String: String] = [:]
        for field in fields {
            let key = field.name.lowercased()
            if let name = spelling[key], let existing = result[name] {
                result[name] = existing + ", " + field.value
            } else {
                spelling[key] = field.name
                result[field.name] = field.value
            }
        }
        return result
    }
}
