//! Build-script helper for webnn-weights.
