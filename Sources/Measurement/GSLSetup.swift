//! GSL's default error handler calls `abort()`. Every entry point into GSL in this module calls
//! `MeasurementGSL.ensure()` first, which turns the handler off once per process; GSL then
//! reports errors through return codes and NaN, which the callers check.
//! (A copy of `Randomness.GSLSetup`: Measurement does not depend on Randomness.)

import CGSL

enum MeasurementGSL {
    private static let done: Bool = {
        gsl_set_error_handler_off()
        return true
    }()

    @inline(__always) static func ensure() { _ = done }
}
