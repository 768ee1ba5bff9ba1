//! track
