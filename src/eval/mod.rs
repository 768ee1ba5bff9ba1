//! eval
