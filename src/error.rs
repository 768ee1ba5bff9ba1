//! Errors that reach the user. Every error names where it happened and why; the CLI maps
//! each kind to an exit code (2 for bad input or an unusable request, 1 for internal faults).

use std::fmt;

/// A problem with user input: the file, and where known the equation (1-based), the line
/// and the column (1-based) of the offending text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub equation: Option<usize>,
    pub message: String,
}

impl InputError {
    pub fn new(file: impl Into<String>, message: impl Into<String>) -> Self {
        InputError {
            file: file.into(),
            line: None,
            column: None,
            equation: None,
            message: message.into(),
        }
    }
    pub fn at(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }
    pub fn equation(mut self, k: usize) -> Self {
        self.equation = Some(k);
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ":")?;
        if let Some(k) = self.equation {
            write!(f, " equation {k}")?;
            if self.line.is_none() {
                if let Some(c) = self.column {
                    write!(f, ", column {c}")?;
                }
            }
            write!(f, ":")?;
        }
        write!(f, " {}", self.message)
    }
}

impl std::error::Error for InputError {}

/// Every error the library returns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Input(#[from] InputError),
    /// A request the program cannot serve (e.g. `--backend cuda` without a GPU).
    #[error("{0}")]
    Usage(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A failure of the GPU stack (driver, NVRTC, cuBLAS) with the call that failed.
    #[error("CUDA: {0}")]
    Cuda(String),
    /// A device allocation refused for want of memory (`CUDA_ERROR_OUT_OF_MEMORY`). The CUDA
    /// backend's batch buffers and resident slots halve their size on it and go on (down to
    /// one point); elsewhere it is reported as any CUDA failure.
    #[error("CUDA: {0}")]
    DeviceMemory(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// Process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) | Error::Usage(_) | Error::Cuda(_) | Error::DeviceMemory(_) => 2,
            Error::Io { .. } => 2,
            Error::Internal(_) => 1,
        }
    }
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
