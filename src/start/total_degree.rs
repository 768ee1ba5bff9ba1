//! td
