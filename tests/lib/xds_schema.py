# SPDX-License-Identifier: Apache-2.0
"""The build's descriptor set (xds-api.pb) for the Python test clients.

  from xds_schema import Schema
  s = Schema(path)            # every file of the set, in a pool of its own
  s.pool                      # for json_format's descriptor_pool=
  s.cls("envoy.service.discovery.v3.DiscoveryRequest")   # the class
  s.message("...")            # a new, empty message of it

protoc --include_imports writes dependencies first, so the files are
added in order. Needs python3-protobuf (scripts/install-deps).
"""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


class Schema:
    def __init__(self, path):
        with open(path, "rb") as f:
            fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
        self.pool = descriptor_pool.DescriptorPool()
        for fd in fds.file:
            self.pool.Add(fd)
        self.factory = message_factory.MessageFactory(self.pool)

    def cls(self, name):
        return self.factory.GetPrototype(self.pool.FindMessageTypeByName(name))

    def message(self, name):
        return self.cls(name)()
