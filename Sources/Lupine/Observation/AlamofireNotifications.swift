import Foundation

extension Request {
    /// Posted when a request is resumed.
    public static let didResumeNotification = Notification.Name(rawValue: "lupine.notification.name.request.didResume")
    /// Posted when a request is suspended.
    public static let didSuspendNotification = Notification.Name(rawValue: "lupine.notification.name.request.didSuspend")
    /// Posted when a request is cancelled.
    public static let didCancelNotification = Notification.Name(rawValue: "lupine.notification.name.request.didCancel")
    /// Posted when a request finishes.
    public static let didFinishNotification = Notification.Name(rawValue: "lupine.notification.name.request.didFinish")
    /// Posted when a request's task is resumed (`request(_:didResumeTask:)`).
    public static let didResumeTaskNotification = Notification.Name(rawValue: "lupine.notification.name.request.didResumeTask")
    /// Posted when a request's task is suspended (`request(_:didSuspendTask:)`).
    public static let didSuspendTaskNotification = Notification.Name(rawValue: "lupine.notification.name.request.didSuspendTask")
    /// Posted when a request's task is cancelled (`request(_:didCancelTask:)`).
    public static let didCancelTaskNotification = Notification.Name(rawValue: "lupine.notification.name.request.didCancelTask")
    /// Posted when a request's task completes, once per attempt (`request(_:didCompleteTask:with:)`).
    public static let didCompleteTaskNotification = Notification.Name(rawValue: "lupine.notification.name.request.didCompleteTask")

    /// The userInfo key under which notifications carry the request.
    static let notificationRequestKey = "lupine.notification.key.request"
}

extension Notification {
    /// The Request a Lupine notification is about.
    public var request: Request? {
        userInfo?[Request.notificationRequestKey] as? Request
    }

    init(name: Notification.Name, request: Request) {
        self.init(name: name, object: nil, userInfo: request.notificationUserInfo(endingWith: name == Request.didFinishNotification))
    }
}

extension Request {
    /// The userInfo of this request's notifications: one dictionary for all of them instead of
    /// one each. It holds the request, so it is let go with `didFinishNotification`, the last
    /// a request posts (a monitor posting later, on its own queue, makes it anew and lets it go
    /// with its own `didFinishNotification`).
    func notificationUserInfo(endingWith isLast: Bool) -> [AnyHashable: Any] {
        mutableState.withLock { state in
            let userInfo = state.notificationUserInfo ?? Request.notificationUserInfo(holding: self)
            state.notificationUserInfo = isLast ? nil : userInfo
            return userInfo
        }
    }

    /// The userInfo of every notification, its one value a placeholder. The key is hashed and
    /// placed once per process. Unchecked: a constant holding a String and `()`, only copied.
    nonisolated(unsafe) private static let notificationUserInfoTemplate: [AnyHashable: Any] = [notificationRequestKey: ()]

    /// `[notificationRequestKey: request]`, copied from the template with the value set in place:
    /// a dictionary literal hashes its key (wrapped in `AnyHashable`) for every request, which
    /// cost more than the rest of the four notifications' userInfo.
    private static func notificationUserInfo(holding request: Request) -> [AnyHashable: Any] {
        var userInfo = notificationUserInfoTemplate
        userInfo.values[userInfo.startIndex] = request
        return userInfo
    }
}

/// The Session's default monitor: posts the `Request.did...Notification`s on
/// `NotificationCenter.default` (object nil, the request in userInfo, read it with
/// `notification.request`), from the monitor's default queue.
///
/// The `...TaskNotification`s follow the task events, one task per attempt, as in Alamofire. The
/// notifications carry the request only: for them Lupine makes no facade task.
public final class AlamofireNotifications: EventMonitor {
    /// Creates the monitor.
    public init() {}

    /// Posts `Request.didResumeNotification`.
    public func requestDidResume(_ request: Request) {
        post(Request.didResumeNotification, for: request)
    }

    /// Posts `Request.didSuspendNotification`.
    public func requestDidSuspend(_ request: Request) {
        post(Request.didSuspendNotification, for: request)
    }

    /// Posts `Request.didCancelNotification`.
    public func requestDidCancel(_ request: Request) {
        post(Request.didCancelNotification, for: request)
    }

    /// Posts `Request.didFinishNotification`.
    public func requestDidFinish(_ request: Request) {
        post(Request.didFinishNotification, for: request)
    }

    /// Posts `Request.didResumeTaskNotification`.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) {
        post(.resume, for: request)
    }

    /// Posts `Request.didSuspendTaskNotification`.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {
        post(.suspend, for: request)
    }

    /// Posts `Request.didCancelTaskNotification`.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) {
        post(.cancel, for: request)
    }

    /// Posts `Request.didCompleteTaskNotification`.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        post(.complete, for: request)
    }

    /// Posts the notification of a task event, if it has one. Lupine calls it in place of the
    /// task-typed methods above, which need a task the notification does not carry.
    func post(_ event: TaskEvent, for request: Request) {
        switch event {
        case .resume: post(Request.didResumeTaskNotification, for: request)
        case .suspend: post(Request.didSuspendTaskNotification, for: request)
        case .cancel: post(Request.didCancelTaskNotification, for: request)
        case .complete: post(Request.didCompleteTaskNotification, for: request)
        case .create, .failEarly, .finishDownloading: break
        }
    }

    private func post(_ name: Notification.Name, for request: Request) {
        ThreadContract.userCode("a NotificationCenter observer")
        NotificationCenter.default.post(Notification(name: name, request: request))
    }
}
