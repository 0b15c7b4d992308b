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
    /// Posted when a request's exchange starts on the transport, or reads again after a suspension.
    public static let didResumeTaskNotification = Notification.Name(rawValue: "lupine.notification.name.request.didResumeTask")
    /// Posted when a request is suspended while its exchange runs (the body stops being read).
    public static let didSuspendTaskNotification = Notification.Name(rawValue: "lupine.notification.name.request.didSuspendTask")
    /// Posted when a request's exchange is cancelled.
    public static let didCancelTaskNotification = Notification.Name(rawValue: "lupine.notification.name.request.didCancelTask")
    /// Posted when a request's exchange completes, once per attempt.
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
        self.init(name: name, object: nil, userInfo: [Request.notificationRequestKey: request])
    }
}

/// The Session's default monitor: posts the `Request.did...Notification`s on
/// `NotificationCenter.default` (object nil, the request in userInfo, read it with
/// `notification.request`), from the monitor's default queue.
///
/// The `...TaskNotification`s follow the request's exchanges on the transport, where Alamofire
/// follows its URLSession tasks: one exchange per attempt, redirect hops included.
public final class AlamofireNotifications: EventMonitor {
    /// Creates the monitor.
    public init() {}

    /// Posts `Request.didResumeNotification`.
    public func requestDidResume(_ request: Request) {
        NotificationCenter.default.post(Notification(name: Request.didResumeNotification, request: request))
    }

    /// Posts `Request.didSuspendNotification`.
    public func requestDidSuspend(_ request: Request) {
        NotificationCenter.default.post(Notification(name: Request.didSuspendNotification, request: request))
    }

    /// Posts `Request.didCancelNotification`.
    public func requestDidCancel(_ request: Request) {
        NotificationCenter.default.post(Notification(name: Request.didCancelNotification, request: request))
    }

    /// Posts `Request.didFinishNotification`.
    public func requestDidFinish(_ request: Request) {
        NotificationCenter.default.post(Notification(name: Request.didFinishNotification, request: request))
    }

    /// Posts `Request.didResumeTaskNotification` when an attempt's exchange starts, or a
    /// suspended one reads again (Alamofire posts it from `request(_:didResumeTask:)`).
    public func requestDidResumeExchange(_ request: Request) {
        NotificationCenter.default.post(Notification(name: Request.didResumeTaskNotification, request: request))
    }

    /// Posts `Request.didSuspendTaskNotification` when a running exchange is suspended.
    public func requestDidSuspendExchange(_ request: Request) {
        NotificationCenter.default.post(Notification(name: Request.didSuspendTaskNotification, request: request))
    }

    /// Posts `Request.didCancelTaskNotification` when a running exchange is cancelled.
    public func requestDidCancelExchange(_ request: Request) {
        NotificationCenter.default.post(Notification(name: Request.didCancelTaskNotification, request: request))
    }

    /// Posts `Request.didCompleteTaskNotification` when an attempt's exchange ends.
    public func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline) {
        NotificationCenter.default.post(Notification(name: Request.didCompleteTaskNotification, request: request))
    }
}
