// This package is filled by a later issue; see README.md for what it will hold.
export {};
