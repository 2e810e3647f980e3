import Testing

extension Tag {
    /// Runs headless Chromium (Debian's `chromium`, with SwiftShader's WebGL): seconds per test.
    @Tag public static var browser: Self
    /// Needs root (mount, mknod, chown to root, running the CLI as `nobody`); skipped otherwise.
    @Tag public static var root: Self
}
