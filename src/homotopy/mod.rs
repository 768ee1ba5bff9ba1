//! homotopy
