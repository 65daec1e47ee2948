//! wasi:keyvalue@0.2.0-draft2 (store, atomics, batch) as Spin 3+ serves it beside its own
//! key-value API, on the same stores and grants (`key_value_stores`): a `bucket` is a
//! store handle. Atomic increments and compare-and-swap are the backend's own (SQLite's
//! `BEGIN IMMEDIATE`, Redis's `INCRBY` and a script), so they hold across instances.
//!
//! One difference from Spin 4.0.2, where devhost is right and Spin is not: Spin's SQLite
//! store swaps a `cas` that found no value with an unconditional upsert, so a swap meant to
//! claim an absent key overwrites one written meanwhile. The application does not rely on
//! compare-and-swap for that (it counts with `increment`, atomic on both).

use crate::host::wasi::keyvalue::{atomics, batch, store};
use crate::host::{KvStore, Opened, RequestState};
use crate::kv::Store;
use std::sync::Arc;
use wasmtime::component::Resource;

/// A compare-and-swap in progress: the value read when it began is the one the swap
/// expects to find.
pub struct KvCas {
    store: Arc<dyn Store>,
    key: String,
    expected: Option<Vec<u8>>,
}

fn other(e: impl ToString) -> store::Error {
    store::Error::Other(e.to_string())
}

impl RequestState {
    fn bucket(&self, bucket: &Resource<KvStore>) -> Result<Arc<dyn Store>, store::Error> {
        self.store(bucket).map_err(|_| other("no such bucket"))
    }
}

impl store::Host for RequestState {
    fn open(&mut self, identifier: String) -> Result<Resource<KvStore>, store::Error> {
        self.open_store(&identifier).map_err(|e| match e {
            Opened::AccessDenied => store::Error::AccessDenied,
            Opened::NoSuchStore => store::Error::NoSuchStore,
            Opened::Other(e) => store::Error::Other(e),
        })
    }
}

impl store::HostBucket for RequestState {
    fn get(
        &mut self,
        bucket: Resource<KvStore>,
        key: String,
    ) -> Result<Option<Vec<u8>>, store::Error> {
        let store = self.bucket(&bucket)?;
        self.kv(false, || store.get(&key)).map_err(other)
    }

    fn set(
        &mut self,
        bucket: Resource<KvStore>,
        key: String,
        value: Vec<u8>,
    ) -> Result<(), store::Error> {
        let store = self.bucket(&bucket)?;
        self.kv(true, || store.set(&key, &value)).map_err(other)
    }

    fn delete(&mut self, bucket: Resource<KvStore>, key: String) -> Result<(), store::Error> {
        let store = self.bucket(&bucket)?;
        self.kv(true, || store.delete(&key)).map_err(other)
    }

    fn exists(&mut self, bucket: Resource<KvStore>, key: String) -> Result<bool, store::Error> {
        let store = self.bucket(&bucket)?;
        self.kv(false, || store.exists(&key)).map_err(other)
    }

    /// Every key in one answer (no cursor), as Spin's stores answer.
    fn list_keys(
        &mut self,
        bucket: Resource<KvStore>,
        _cursor: Option<String>,
    ) -> Result<store::KeyResponse, store::Error> {
        let store = self.bucket(&bucket)?;
        let keys = self.kv(false, || store.keys()).map_err(other)?;
        Ok(store::KeyResponse { keys, cursor: None })
    }

    fn drop(&mut self, bucket: Resource<KvStore>) -> wasmtime::Result<()> {
        self.resources().delete(bucket)?;
        Ok(())
    }
}

impl atomics::Host for RequestState {
    fn increment(
        &mut self,
        bucket: Resource<KvStore>,
        key: String,
        delta: i64,
    ) -> Result<i64, store::Error> {
        let store = self.bucket(&bucket)?;
        self.kv(true, || store.increment(&key, delta))
            .map_err(other)
    }

    fn swap(&mut self, cas: Resource<KvCas>, value: Vec<u8>) -> Result<(), atomics::CasError> {
        let (store, key, expected) = match self.resources().delete(cas) {
            Ok(cas) => (cas.store, cas.key, cas.expected),
            Err(e) => return Err(atomics::CasError::StoreError(other(e))),
        };
        let swapped = self
            .kv(true, || store.swap_if(&key, expected.as_deref(), &value))
            .map_err(|e| atomics::CasError::StoreError(other(e)))?;
        if swapped {
            return Ok(());
        }
        // Failed: a new operation expecting what is there now, for the caller to retry.
        let current = self
            .kv(false, || store.get(&key))
            .map_err(|e| atomics::CasError::StoreError(other(e)))?;
        let retry = KvCas {
            store,
            key,
            expected: current,
        };
        match self.resources().push(retry) {
            Ok(retry) => Err(atomics::CasError::CasFailed(retry)),
            Err(e) => Err(atomics::CasError::StoreError(other(e))),
        }
    }
}

impl atomics::HostCas for RequestState {
    fn new(
        &mut self,
        bucket: Resource<KvStore>,
        key: String,
    ) -> Result<Resource<KvCas>, store::Error> {
        let store = self.bucket(&bucket)?;
        let expected = self.kv(false, || store.get(&key)).map_err(other)?;
        self.resources()
            .push(KvCas {
                store,
                key,
                expected,
            })
            .map_err(other)
    }

    fn current(&mut self, cas: Resource<KvCas>) -> Result<Option<Vec<u8>>, store::Error> {
        self.resources()
            .get(&cas)
            .map(|cas| cas.expected.clone())
            .map_err(other)
    }

    fn drop(&mut self, cas: Resource<KvCas>) -> wasmtime::Result<()> {
        self.resources().delete(cas)?;
        Ok(())
    }
}

impl batch::Host for RequestState {
    fn get_many(
        &mut self,
        bucket: Resource<KvStore>,
        keys: Vec<String>,
    ) -> Result<Vec<(String, Option<Vec<u8>>)>, store::Error> {
        let store = self.bucket(&bucket)?;
        self.kv(false, || {
            keys.into_iter()
                .map(|key| store.get(&key).map(|value| (key, value)))
                .collect::<Result<Vec<_>, String>>()
        })
        .map_err(other)
    }

    fn set_many(
        &mut self,
        bucket: Resource<KvStore>,
        key_values: Vec<(String, Vec<u8>)>,
    ) -> Result<(), store::Error> {
        let store = self.bucket(&bucket)?;
        self.kv(true, || store.set_many(&key_values)).map_err(other)
    }

    fn delete_many(
        &mut self,
        bucket: Resource<KvStore>,
        keys: Vec<String>,
    ) -> Result<(), store::Error> {
        let store = self.bucket(&bucket)?;
        self.kv(true, || keys.iter().try_for_each(|key| store.delete(key)))
            .map_err(other)
    }
}
