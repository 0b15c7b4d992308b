import Foundation

extension Progress {
    /// Sets the counts without tripping corelibs-foundation: on Linux, changing `totalUnitCount`
    /// from a non-zero value straight to 0 traps inside Progress's fraction arithmetic (seen with
    /// Swift 6.3.1). Going through -1 (indeterminate) first is safe, so a retry's reset or a
    /// `Content-Length: 0` response after a larger one cannot crash the process.
    func lupineSet(total: Int64? = nil, completed: Int64? = nil) {
        if let total {
            if total == 0, totalUnitCount != 0 { totalUnitCount = -1 }
            if let completed { completedUnitCount = completed }
            totalUnitCount = total
        }
        if let completed { completedUnitCount = completed }
    }
}
