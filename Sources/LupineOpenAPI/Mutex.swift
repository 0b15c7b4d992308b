// The ThreadSanitizer build's Mutex for this module: see Sources/Lupine/Mutex.swift.
#if LUPINE_TSAN
internal import LupineSanitizerSupport
typealias Mutex<Value: ~Copyable> = SanitizerVisibleMutex<Value>
#endif
