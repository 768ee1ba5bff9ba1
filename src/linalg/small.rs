//! small
