#ifndef CGSL_SHIM_H
#define CGSL_SHIM_H
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>

/* GSL exposes generator types as mutable C globals, which Swift 6 refuses to read.
   Static inline accessors import as plain functions. */
static inline const gsl_rng_type *cgsl_rng_type_taus2(void) { return gsl_rng_taus2; }
static inline const gsl_rng_type *cgsl_rng_type_mt19937(void) { return gsl_rng_mt19937; }
#endif
