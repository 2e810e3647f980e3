import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A desktop notification (issue 37): what a use counted by the packaged user service says, for a
/// user who never reads the journal. Through libnotify (`libnotify.so.4`), opened with `dlopen`
/// when first needed: an optional dependency (the package suggests it); without it, or without a
/// notification server on the session bus, nothing is shown and nothing else changes.
enum DesktopNotification {
    private typealias Initialize = @convention(c) (UnsafePointer<CChar>) -> Int32
    private typealias Make = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> OpaquePointer?
    private typealias Show = @convention(c) (OpaquePointer, UnsafeMutableRawPointer?) -> Int32
    private typealias Release = @convention(c) (OpaquePointer) -> Void

    /// libnotify's four functions, or nil when it cannot be opened. C function pointers, read only.
    private struct Functions: @unchecked Sendable {
        var make: Make
        var show: Show
        var release: Release
    }

    private static let functions: Functions? = {
        guard let notify = dlopen("libnotify.so.4", RTLD_NOW | RTLD_LOCAL), let gobject = dlopen("libgobject-2.0.so.0", RTLD_NOW | RTLD_LOCAL),
            let initialize = dlsym(notify, "notify_init"), let make = dlsym(notify, "notify_notification_new"),
            let show = dlsym(notify, "notify_notification_show"), let release = dlsym(gobject, "g_object_unref")
        else { return nil }
        guard unsafeBitCast(initialize, to: Initialize.self)("mapgate") != 0 else { return nil }
        return Functions(make: unsafeBitCast(make, to: Make.self), show: unsafeBitCast(show, to: Show.self), release: unsafeBitCast(release, to: Release.self))
    }()

    /// Whether this run should notify: it has a desktop session bus and no terminal to ask on
    /// (a service of the user's session: `mapgate-serve.service`, a timer's `sync`).
    static func isWanted(environment: [String: String], isInteractive: Bool) -> Bool {
        !isInteractive && environment["DBUS_SESSION_BUS_ADDRESS"].map { !$0.isEmpty } == true
    }

    /// Shows `summary` and `body`; false when it could not.
    @discardableResult
    static func show(summary: String, body: String) -> Bool {
        guard let functions, let notification = functions.make(summary, body, "dialog-information") else { return false }
        defer { functions.release(notification) }
        return functions.show(notification, nil) != 0
    }
}
