// In the ThreadSanitizer build (LUPINE_TSAN=1, see Package.swift) this module's Mutex is a lock
// TSan can see; this declaration shadows Synchronization.Mutex. Other builds use Synchronization's.
#if LUPINE_TSAN
internal import LupineSanitizerSupport
typealias Mutex<Value: ~Copyable> = SanitizerVisibleMutex<Value>
#endif
